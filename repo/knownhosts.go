package repo

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// knownHosts checks SSH host keys against the content of a known_hosts
// file, so credentials can come from a mounted Secret without a file on
// the default path. It supports plain, hashed (|1|salt|hash), wildcard and
// negated host patterns and @revoked keys; @cert-authority lines are
// ignored.
type knownHosts struct {
	lines []knownHostLine
}

type knownHostLine struct {
	patterns []string
	key      ssh.PublicKey
	revoked  bool
}

func parseKnownHosts(data []byte) (*knownHosts, error) {
	kh := &knownHosts{}
	rest := data
	for n := 1; len(bytes.TrimSpace(rest)) > 0; n++ {
		marker, hosts, key, _, next, err := ssh.ParseKnownHosts(rest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("known_hosts: %w", err)
		}
		rest = next
		if marker == "cert-authority" {
			continue
		}
		kh.lines = append(kh.lines, knownHostLine{patterns: hosts, key: key, revoked: marker == "revoked"})
	}
	return kh, nil
}

// callback is an ssh.HostKeyCallback.
func (kh *knownHosts) callback(hostname string, remote net.Addr, key ssh.PublicKey) error {
	host := strings.ToLower(knownhosts.Normalize(hostname))
	known := false
	for _, l := range kh.lines {
		if !l.matches(host) {
			continue
		}
		same := bytes.Equal(l.key.Marshal(), key.Marshal())
		if l.revoked && same {
			return fmt.Errorf("%w: host key of %s is revoked", ErrHostKey, host)
		}
		if same {
			return nil
		}
		known = known || !l.revoked
	}
	if known {
		return fmt.Errorf("%w: host key of %s does not match known_hosts (%s %s)",
			ErrHostKey, host, key.Type(), ssh.FingerprintSHA256(key))
	}
	return fmt.Errorf("%w: %s is not in known_hosts (%s %s)",
		ErrHostKey, host, key.Type(), ssh.FingerprintSHA256(key))
}

// algorithms lists the host key algorithms known for a host, so the
// server is asked for a key type we can verify.
func (kh *knownHosts) algorithms(hostport string) []string {
	host := strings.ToLower(knownhosts.Normalize(hostport))
	var algos []string
	seen := map[string]bool{}
	for _, l := range kh.lines {
		if l.revoked || !l.matches(host) {
			continue
		}
		for _, a := range keyAlgorithms(l.key.Type()) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	return algos
}

func keyAlgorithms(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}

// matches applies OpenSSH pattern rules: a negated match excludes the line.
func (l knownHostLine) matches(host string) bool {
	matched := false
	for _, p := range l.patterns {
		neg := strings.HasPrefix(p, "!")
		if !matchHostPattern(strings.TrimPrefix(p, "!"), host) {
			continue
		}
		if neg {
			return false
		}
		matched = true
	}
	return matched
}

func matchHostPattern(pattern, host string) bool {
	if strings.HasPrefix(pattern, "|1|") {
		return matchHashed(pattern, host)
	}
	return wildcardMatch(strings.ToLower(pattern), host)
}

func matchHashed(pattern, host string) bool {
	parts := strings.Split(pattern, "|")
	if len(parts) != 4 {
		return false
	}
	salt, err1 := base64.StdEncoding.DecodeString(parts[2])
	want, err2 := base64.StdEncoding.DecodeString(parts[3])
	if err1 != nil || err2 != nil {
		return false
	}
	mac := hmac.New(sha1.New, salt)
	mac.Write([]byte(host))
	return hmac.Equal(mac.Sum(nil), want)
}

// wildcardMatch matches '*' and '?' only (brackets are literal, as in
// "[host]:port").
func wildcardMatch(pattern, s string) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if wildcardMatch(pattern[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || pattern[0] != s[0] {
				return false
			}
		}
		pattern, s = pattern[1:], s[1:]
	}
	return s == ""
}
