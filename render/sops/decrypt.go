package sops

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	gosops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	"github.com/getsops/sops/v3/config"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
)

// store is the part of a sops store that decryption needs.
type store interface {
	LoadEncryptedFile(in []byte) (gosops.Tree, error)
	EmitPlainFile(in gosops.TreeBranches) ([]byte, error)
}

// Decrypt decrypts a sops document and returns its plaintext in the same
// format. The format follows the file extension: .json is JSON, anything
// else (.yaml, .yml, none) is YAML. When allowedRecipients is not empty,
// only identities whose recipient (age1...) is listed may be used. The MAC
// is verified. Errors are *FileError naming file, and wrap ErrNotEncrypted,
// ErrMalformed, ErrNoKey (a *NoKeyError) or ErrIntegrity.
func (k *Keyring) Decrypt(file string, data []byte, allowedRecipients []string) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, &FileError{File: file, Err: &malformedError{err: errors.New("parser failure")}}
		}
	}()
	out, err = k.decrypt(storeFor(file), data, allowedRecipients)
	if err != nil {
		return nil, &FileError{File: file, Err: err}
	}
	return out, nil
}

func (k *Keyring) decrypt(st store, data []byte, allowedRecipients []string) ([]byte, error) {
	tree, err := st.LoadEncryptedFile(data)
	if err != nil {
		if errors.Is(err, gosops.MetadataNotFound) || !IsEncrypted(data) {
			return nil, ErrNotEncrypted
		}
		return nil, &malformedError{err: err}
	}
	key, err := dataKey(tree.Metadata, k.usable(allowedRecipients), len(allowedRecipients) > 0)
	if err != nil {
		return nil, err
	}
	if err := verify(&tree, key); err != nil {
		return nil, err
	}
	plain, err := st.EmitPlainFile(tree.Branches)
	if err != nil {
		return nil, fmt.Errorf("cannot emit plaintext: %w", err)
	}
	return plain, nil
}

// verify decrypts the tree in place and checks its MAC.
func verify(tree *gosops.Tree, key []byte) error {
	cipher := aes.NewCipher()
	mac, err := tree.Decrypt(key, cipher)
	if err != nil {
		return &integrityError{detail: "a value cannot be decrypted with the data key (the file was changed after it was encrypted)"}
	}
	stored, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, key,
		tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return &integrityError{detail: "the MAC cannot be decrypted (sops.mac or sops.lastmodified was changed)"}
	}
	if s, ok := stored.(string); !ok || s != mac {
		return &integrityError{detail: "MAC mismatch (the file was changed after it was encrypted)"}
	}
	return nil
}

func storeFor(file string) store {
	if strings.EqualFold(path.Ext(file), ".json") {
		return sopsjson.NewStore(&config.JSONStoreConfig{})
	}
	return sopsyaml.NewStore(&config.YAMLStoreConfig{})
}
