package sops

import (
	"bytes"
	"io"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"
	"github.com/getsops/sops/v3/shamir"
)

// maxDataKey bounds what an age stanza may decrypt to; a sops data key is
// 32 bytes (a Shamir share a little more).
const maxDataKey = 4096

// dataKey recovers the file's data key with the usable identities, as
// sops does: one share per key group, combined with Shamir's scheme when
// there are several groups. Only age keys are used: other key types (kms,
// pgp, vault, ...) are never contacted.
func dataKey(m *metadata, ids []age.Identity, restricted bool) ([]byte, error) {
	groups := m.groups()
	var parts [][]byte
	for _, g := range groups {
		if part := decryptGroup(g, ids); part != nil {
			parts = append(parts, part)
		}
	}
	if len(groups) <= 1 {
		if len(parts) == 1 {
			return parts[0], nil
		}
		return nil, noKey(groups, restricted)
	}
	if len(parts) == 0 || len(parts) < m.ShamirThreshold {
		return nil, noKey(groups, restricted)
	}
	key, err := shamir.Combine(parts)
	if err != nil {
		return nil, &integrityError{detail: "cannot combine the key groups' shares"}
	}
	return key, nil
}

// decryptGroup returns the first share of the group that an identity opens.
func decryptGroup(g keyGroup, ids []age.Identity) []byte {
	if len(ids) == 0 {
		return nil
	}
	for _, k := range g.Age {
		if key, err := openStanza(k.Enc, ids); err == nil {
			return key
		}
	}
	return nil
}

func openStanza(encrypted string, ids []age.Identity) ([]byte, error) {
	var src io.Reader = strings.NewReader(encrypted)
	if strings.HasPrefix(strings.TrimSpace(encrypted), armor.Header) {
		src = armor.NewReader(src)
	}
	r, err := age.Decrypt(src, ids...)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.LimitReader(r, maxDataKey)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// noKey lists the file's recipients for the error message.
func noKey(groups []keyGroup, restricted bool) error {
	e := &NoKeyError{Restricted: restricted}
	for _, g := range groups {
		for _, k := range g.Age {
			e.Recipients = append(e.Recipients, k.Recipient)
		}
		e.OtherKeys += g.others()
	}
	return e
}
