package verify

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// AllowedSigner is one line of a git allowed_signers file (ssh-keygen(1),
// ALLOWED SIGNERS): principals, options and a public key.
type AllowedSigner struct {
	// Principals are patterns (* and ? wildcards) naming the signer.
	Principals []string
	Key        ssh.PublicKey
	// CertAuthority: Key is a CA; signatures are made by certificates
	// it signed for a matching principal.
	CertAuthority bool
	// Namespaces, when set, limit the key to these namespace patterns.
	Namespaces []string
	// ValidAfter and ValidBefore bound the key's validity (zero: none).
	ValidAfter, ValidBefore time.Time
	// Where is file:line.
	Where string
}

// ParseAllowedSigners reads an allowed_signers file; errors name file
// and line, and every bad line is reported.
func ParseAllowedSigners(file string, b []byte) ([]AllowedSigner, error) {
	var out []AllowedSigner
	var errs []error
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := fmt.Sprintf("%s:%d", file, i+1)
		s, err := parseSignerLine(line)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		s.Where = where
		out = append(out, s)
	}
	return out, errors.Join(errs...)
}

func parseSignerLine(line string) (AllowedSigner, error) {
	principals, rest := cutField(line)
	principals = strings.Trim(principals, `"`)
	if principals == "" || rest == "" {
		return AllowedSigner{}, errors.New("want: principals [options] keytype key")
	}
	key, _, opts, _, err := ssh.ParseAuthorizedKey([]byte(rest))
	if err != nil {
		return AllowedSigner{}, fmt.Errorf("public key: %w", err)
	}
	s := AllowedSigner{Principals: strings.Split(principals, ","), Key: key}
	for _, o := range opts {
		if err := s.setOption(o); err != nil {
			return AllowedSigner{}, err
		}
	}
	return s, nil
}

// cutField splits off the first field, which may be double-quoted.
func cutField(line string) (string, string) {
	if strings.HasPrefix(line, `"`) {
		if end := strings.Index(line[1:], `"`); end >= 0 {
			return line[:end+2], strings.TrimSpace(line[end+2:])
		}
	}
	f, rest, _ := strings.Cut(line, " ")
	if i := strings.IndexByte(f, '\t'); i >= 0 {
		f, rest = f[:i], f[i+1:]+" "+rest
	}
	return f, strings.TrimSpace(rest)
}

func (s *AllowedSigner) setOption(o string) error {
	name, value, _ := strings.Cut(o, "=")
	value = strings.Trim(value, `"`)
	var err error
	switch strings.ToLower(name) {
	case "cert-authority":
		s.CertAuthority = true
	case "namespaces":
		s.Namespaces = strings.Split(value, ",")
	case "valid-after":
		s.ValidAfter, err = parseSignerTime(value)
	case "valid-before":
		s.ValidBefore, err = parseSignerTime(value)
	default:
		return fmt.Errorf("option %q: want cert-authority, namespaces, valid-after or valid-before", name)
	}
	if err != nil {
		return fmt.Errorf("option %s: %w", name, err)
	}
	return nil
}

// parseSignerTime reads YYYYMMDD[HHMM[SS]][Z] as ssh-keygen does: local
// time unless it ends in Z.
func parseSignerTime(v string) (time.Time, error) {
	loc := time.Local
	if strings.HasSuffix(v, "Z") || strings.HasSuffix(v, "z") {
		v, loc = v[:len(v)-1], time.UTC
	}
	layouts := map[int]string{8: "20060102", 12: "200601021504", 14: "20060102150405"}
	layout, ok := layouts[len(v)]
	if !ok {
		return time.Time{}, fmt.Errorf("%q: want YYYYMMDD[HHMM[SS]][Z]", v)
	}
	return time.ParseInLocation(layout, v, loc)
}

// validAt reports whether the key was valid at t.
func (s AllowedSigner) validAt(t time.Time) bool {
	return (s.ValidAfter.IsZero() || !t.Before(s.ValidAfter)) && (s.ValidBefore.IsZero() || t.Before(s.ValidBefore))
}

// allowsNamespace reports whether the key may sign in namespace ns.
func (s AllowedSigner) allowsNamespace(ns string) bool {
	if len(s.Namespaces) == 0 {
		return true
	}
	return matchAny(s.Namespaces, ns)
}

// matchAny matches name against comma-separated-style patterns with *
// and ?; a pattern starting with ! negates (any negated match refuses).
func matchAny(patterns []string, name string) bool {
	ok := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		if m, _ := path.Match(strings.TrimPrefix(p, "!"), name); m {
			if neg {
				return false
			}
			ok = true
		}
	}
	return ok
}
