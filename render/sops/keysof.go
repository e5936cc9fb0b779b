package sops

import (
	"github.com/getsops/sops/v3/keyservice"

	"github.com/regatta-dev/regatta/spec"
)

// KeysOf returns the master keys of a sops document, key group by key
// group, from its metadata alone (nothing is decrypted). The store
// follows the file name as Decrypt's does.
func KeysOf(file string, data []byte) (groups [][]Key, err error) {
	defer func() {
		if r := recover(); r != nil {
			groups, err = nil, &FileError{File: file, Err: &malformedError{err: errNotHere}}
		}
	}()
	tree, err := storeFor(file, data).LoadEncryptedFile(data)
	if err != nil {
		return nil, &FileError{File: file, Err: &malformedError{err: err}}
	}
	for _, g := range tree.Metadata.KeyGroups {
		var keys []Key
		for _, mk := range g {
			k := keyservice.KeyFromMasterKey(mk)
			keys = append(keys, idOf(&k))
		}
		groups = append(groups, keys)
	}
	return groups, nil
}

// Allow adds k to d in the field of its type (its id as the field takes
// it), unless it is there already. It returns false for a key type
// spec.decryption cannot list (Huawei Cloud KMS).
func Allow(d *spec.Decryption, k Key) bool {
	if isAllowed(d, k) && !d.IsEmpty() {
		return true
	}
	switch k.Type {
	case KeyTypeAge:
		d.AgeRecipients = append(d.AgeRecipients, k.ID)
	case KeyTypePGP:
		d.PGPFingerprints = append(d.PGPFingerprints, k.ID)
	case KeyTypeAWSKMS:
		d.AWSKMSARNs = append(d.AWSKMSARNs, k.ID)
	case KeyTypeGCPKMS:
		d.GCPKMSResourceIDs = append(d.GCPKMSResourceIDs, k.ID)
	case KeyTypeAzureKV:
		d.AzureKeyVaultURLs = append(d.AzureKeyVaultURLs, spec.NormalizeKeyURL(k.ID))
	case KeyTypeVault:
		d.HCVaultTransitURIs = append(d.HCVaultTransitURIs, k.ID)
	default:
		return false
	}
	return true
}
