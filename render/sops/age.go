package sops

import (
	"errors"
	"fmt"

	sopsage "github.com/getsops/sops/v3/age"

	"github.com/regatta-dev/regatta/spec"
)

// errNoAgeKey: no age identity is configured at all.
var errNoAgeKey = errors.New("no age key is configured (--sops-age-key-file, SOPS_AGE_KEY_FILE or SOPS_AGE_KEY)")

// decryptAge decrypts an age stanza of a file with the identity of its
// recipient only: a file that names an allowed recipient but was
// encrypted to another one is not decrypted by that other identity. With
// no restriction, identities without a known recipient (plugins) are
// tried too.
func (k *Keyring) decryptAge(recipient string, ciphertext []byte, allowed *spec.Decryption) ([]byte, error) {
	if len(k.ages) == 0 {
		return nil, errNoAgeKey
	}
	var ids sopsage.ParsedIdentities
	for _, a := range k.ages {
		if a.recipient == recipient || (a.recipient == "" && allowed.IsEmpty()) {
			ids = append(ids, a.id)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no identity for this recipient among the %d configured age keys", len(k.ages))
	}
	mk := &sopsage.MasterKey{Recipient: recipient, EncryptedKey: string(ciphertext)}
	ids.ApplyToMasterKey(mk)
	plain, err := mk.Decrypt()
	if err != nil {
		return nil, fmt.Errorf("the identity does not decrypt the data key (the age stanza was changed)")
	}
	return plain, nil
}
