package sops

import (
	"bytes"
	"io"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"
	gosops "github.com/getsops/sops/v3"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/shamir"
)

// maxDataKey bounds what an age stanza may decrypt to; a sops data key is
// 32 bytes (a Shamir part a little more).
const maxDataKey = 4096

// dataKey recovers the file's data key with the usable identities. Only age
// master keys are considered: other key types (kms, pgp, vault, ...) are
// never contacted.
func dataKey(meta gosops.Metadata, ids []age.Identity, restricted bool) ([]byte, error) {
	var parts [][]byte
	for _, group := range meta.KeyGroups {
		if part := decryptGroup(group, ids); part != nil {
			parts = append(parts, part)
		}
	}
	if len(meta.KeyGroups) <= 1 {
		if len(parts) == 1 {
			return parts[0], nil
		}
		return nil, noKey(meta, restricted)
	}
	if len(parts) == 0 || len(parts) < meta.ShamirThreshold {
		return nil, noKey(meta, restricted)
	}
	key, err := shamir.Combine(parts)
	if err != nil {
		return nil, &integrityError{detail: "cannot combine the key groups' shares"}
	}
	return key, nil
}

// decryptGroup returns the first share of the group that an identity opens.
func decryptGroup(group gosops.KeyGroup, ids []age.Identity) []byte {
	if len(ids) == 0 {
		return nil
	}
	for _, k := range group {
		ak, ok := k.(*sopsage.MasterKey)
		if !ok {
			continue
		}
		if key, err := openStanza(ak.EncryptedKey, ids); err == nil {
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
func noKey(meta gosops.Metadata, restricted bool) error {
	e := &NoKeyError{Restricted: restricted}
	for _, group := range meta.KeyGroups {
		for _, k := range group {
			if ak, ok := k.(*sopsage.MasterKey); ok {
				e.Recipients = append(e.Recipients, ak.Recipient)
			} else {
				e.OtherKeys++
			}
		}
	}
	return e
}
