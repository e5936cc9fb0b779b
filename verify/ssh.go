package verify

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// errNotValidThen: a key or certificate outside its validity at the
// commit's time.
var errNotValidThen = errors.New("key not valid")

// checkSSH checks an armored SSH signature (PROTOCOL.sshsig) against the
// allowed signers, as `git verify-commit` with gpg.ssh.allowedSignersFile
// does: the key (or the CA of its certificate) must be listed, allowed
// the "git" namespace, and valid at t, the commit's time.
func (v *Verifier) checkSSH(armored string, payload []byte, t time.Time) (signer, *refusal) {
	sig, err := sshsig.Unarmor([]byte(armored))
	if err != nil {
		return signer{}, &refusal{reason: ReasonBadSignature, detail: fmt.Sprintf("SSH signature: %v", err)}
	}
	key := ssh.FingerprintSHA256(sig.PublicKey)
	if sig.Namespace != sshNamespace {
		return signer{}, &refusal{reason: ReasonBadSignature, key: key,
			detail: fmt.Sprintf("SSH signature in namespace %q, not %q", sig.Namespace, sshNamespace)}
	}
	lines := v.signersOf(sig.PublicKey)
	if len(lines) == 0 {
		return signer{}, &refusal{reason: ReasonUnknownKey, key: key, detail: "no line of allowed_signers lists this key"}
	}
	if err := sshsig.Verify(bytes.NewReader(payload), sig, sig.PublicKey, sig.HashAlgorithm, sshNamespace); err != nil {
		return signer{}, &refusal{reason: ReasonBadSignature, key: key, detail: err.Error()}
	}
	s := signer{key: key, ids: []string{key}}
	var why []string
	reason := ReasonUnknownKey
	for _, l := range lines {
		principals, err := l.admits(sig.PublicKey, t)
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", l.Where, err))
			if errors.Is(err, errNotValidThen) {
				reason = ReasonExpiredKey
			}
			continue
		}
		s.ids = append(s.ids, principals...)
	}
	if len(s.ids) == 1 {
		return s, &refusal{reason: reason, key: key, detail: strings.Join(why, "; ")}
	}
	s.name = strings.Join(s.ids[1:], ",")
	return s, nil
}

// signersOf returns the allowed_signers lines of a key: those listing it,
// and, for a certificate, those listing its CA as cert-authority.
func (v *Verifier) signersOf(pub ssh.PublicKey) []AllowedSigner {
	want, ca := pub.Marshal(), []byte(nil)
	if cert, ok := pub.(*ssh.Certificate); ok {
		ca = cert.SignatureKey.Marshal()
	}
	var out []AllowedSigner
	for _, l := range v.opts.Keys.SSH {
		k := l.Key.Marshal()
		if (l.CertAuthority && ca != nil && bytes.Equal(k, ca)) || (!l.CertAuthority && bytes.Equal(k, want)) {
			out = append(out, l)
		}
	}
	return out
}

// admits returns the principals a line grants the key at t, or why it
// grants none.
func (l AllowedSigner) admits(pub ssh.PublicKey, t time.Time) ([]string, error) {
	if !l.allowsNamespace(sshNamespace) {
		return nil, fmt.Errorf("namespaces=%q does not allow %q", strings.Join(l.Namespaces, ","), sshNamespace)
	}
	if !l.validAt(t) {
		return nil, fmt.Errorf("%w at %s (valid-after %s, valid-before %s)",
			errNotValidThen, fmtTime(t), fmtOpt(l.ValidAfter), fmtOpt(l.ValidBefore))
	}
	cert, ok := pub.(*ssh.Certificate)
	if !ok {
		return l.Principals, nil
	}
	return l.certPrincipals(cert, t)
}

// certPrincipals checks a user certificate the line's CA signed, valid at
// t, and returns its principals the line's patterns match.
func (l AllowedSigner) certPrincipals(cert *ssh.Certificate, t time.Time) ([]string, error) {
	checker := &ssh.CertChecker{
		IsUserAuthority: func(auth ssh.PublicKey) bool { return bytes.Equal(auth.Marshal(), l.Key.Marshal()) },
		Clock:           func() time.Time { return t },
	}
	if cert.CertType != ssh.UserCert {
		return nil, fmt.Errorf("certificate %q is not a user certificate", cert.KeyId)
	}
	var out []string
	var last error
	for _, p := range cert.ValidPrincipals {
		if !matchAny(l.Principals, p) {
			continue
		}
		if err := checker.CheckCert(p, cert); err != nil {
			last = err
			if strings.Contains(err.Error(), "cert is not yet valid") || strings.Contains(err.Error(), "cert has expired") {
				last = fmt.Errorf("%w: certificate %q: %v", errNotValidThen, cert.KeyId, err)
			}
			continue
		}
		out = append(out, p)
	}
	if len(out) == 0 && last == nil {
		last = fmt.Errorf("certificate %q names no principal the line allows", cert.KeyId)
	}
	if len(out) == 0 {
		return nil, last
	}
	return out, nil
}

func fmtOpt(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return fmtTime(t)
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
