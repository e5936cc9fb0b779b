package sops

import (
	"crypto/subtle"
	"errors"
	"path"
	"strings"
)

// Decrypt decrypts a sops document and returns its plaintext in the same
// format. The format follows the file extension: .json is JSON, anything
// else (.yaml, .yml, none) is YAML (comments are not kept). When
// allowedRecipients is not empty, only identities whose recipient (age1...)
// is listed may be used. The MAC is verified before anything is returned.
// Errors are *FileError naming file, and wrap ErrNotEncrypted,
// ErrMalformed, ErrNoKey (a *NoKeyError) or ErrIntegrity.
func (k *Keyring) Decrypt(file string, data []byte, allowedRecipients []string) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, &FileError{File: file, Err: &malformedError{err: errors.New("parser failure")}}
		}
	}()
	out, err = k.decrypt(isJSON(file), data, allowedRecipients)
	if err != nil {
		return nil, &FileError{File: file, Err: err}
	}
	return out, nil
}

func (k *Keyring) decrypt(asJSON bool, data []byte, allowedRecipients []string) ([]byte, error) {
	parse, emit := parseYAML, emitYAML
	if asJSON {
		parse, emit = parseJSON, emitJSON
	}
	docs, err := parse(data)
	if err != nil {
		if !IsEncrypted(data) {
			return nil, ErrNotEncrypted
		}
		return nil, &malformedError{err: err}
	}
	m, err := extractMetadata(docs)
	if err != nil {
		if errors.Is(err, ErrNotEncrypted) {
			return nil, err
		}
		return nil, &malformedError{err: err}
	}
	key, err := dataKey(m, k.usable(allowedRecipients), len(allowedRecipients) > 0)
	if err != nil {
		return nil, err
	}
	if err := verify(docs, m, key); err != nil {
		return nil, err
	}
	return emit(docs)
}

// verify decrypts the documents in place and checks the MAC.
func verify(docs []*node, m *metadata, key []byte) error {
	mac, err := decryptTree(docs, m, key)
	if err != nil {
		return err
	}
	stored, err := decryptValue(m.MAC, key, m.lastModified.Format("2006-01-02T15:04:05Z07:00"))
	if err != nil {
		return &integrityError{detail: "the MAC cannot be decrypted (sops.mac or sops.lastmodified was changed)"}
	}
	s, ok := stored.(string)
	if !ok || s == "" || subtle.ConstantTimeCompare([]byte(s), []byte(mac)) != 1 {
		return &integrityError{detail: "MAC mismatch (the file was changed after it was encrypted)"}
	}
	return nil
}

func isJSON(file string) bool {
	return strings.EqualFold(path.Ext(file), ".json")
}
