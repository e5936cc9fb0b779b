package verify

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// checkPGP checks an armored OpenPGP signature against the trusted keys,
// judging expiry and revocation now, as gpg does for git verify-commit.
// A signing subkey counts as its primary key.
func (v *Verifier) checkPGP(sig string, payload []byte) (signer, *refusal) {
	body, err := unarmorPGP(sig)
	if err != nil {
		return signer{}, &refusal{reason: ReasonBadSignature, detail: err.Error()}
	}
	cfg := &packet.Config{Time: v.now}
	_, entity, err := openpgp.VerifyDetachedSignature(v.opts.Keys.PGP, bytes.NewReader(payload), bytes.NewReader(body), cfg)
	var s signer
	if entity != nil {
		s = pgpSigner(entity)
	}
	if err == nil {
		return s, nil
	}
	r := &refusal{reason: pgpReason(err), key: s.key, name: s.name, detail: err.Error()}
	if r.reason == ReasonUnknownKey {
		r.key, r.detail = issuerOf(body), "no trusted OpenPGP key made this signature"
	}
	return s, r
}

func unarmorPGP(sig string) ([]byte, error) {
	block, err := armor.Decode(strings.NewReader(sig))
	if err != nil {
		return nil, fmt.Errorf("OpenPGP signature: %w", err)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(block.Body); err != nil {
		return nil, fmt.Errorf("OpenPGP signature: %w", err)
	}
	return buf.Bytes(), nil
}

func pgpReason(err error) Reason {
	switch {
	case errors.Is(err, pgperrors.ErrUnknownIssuer):
		return ReasonUnknownKey
	case errors.Is(err, pgperrors.ErrKeyRevoked):
		return ReasonRevokedKey
	case errors.Is(err, pgperrors.ErrKeyExpired), errors.Is(err, pgperrors.ErrSignatureExpired):
		return ReasonExpiredKey
	}
	return ReasonBadSignature
}

// pgpSigner names an entity by its primary key's fingerprint, its
// primary user ID, and (for policies) its e-mail addresses.
func pgpSigner(e *openpgp.Entity) signer {
	fp := strings.ToUpper(fmt.Sprintf("%x", e.PrimaryKey.Fingerprint))
	s := signer{key: fp, ids: []string{fp}}
	if _, id := e.PrimarySelfSignature(); id != nil {
		s.name = id.Name
	}
	for _, id := range e.Identities {
		if id.UserId != nil && id.UserId.Email != "" {
			s.ids = append(s.ids, id.UserId.Email)
		}
		if s.name == "" {
			s.name = id.Name
		}
	}
	return s
}

// issuerOf names the key a signature says made it: its fingerprint, or
// its key ID.
func issuerOf(body []byte) string {
	p, err := packet.Read(bytes.NewReader(body))
	sig, ok := p.(*packet.Signature)
	if err != nil || !ok {
		return ""
	}
	if len(sig.IssuerFingerprint) > 0 {
		return strings.ToUpper(fmt.Sprintf("%x", sig.IssuerFingerprint))
	}
	if sig.IssuerKeyId != nil {
		return fmt.Sprintf("%016X", *sig.IssuerKeyId)
	}
	return ""
}
