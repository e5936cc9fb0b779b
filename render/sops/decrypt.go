package sops

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	gosops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	"github.com/getsops/sops/v3/keyservice"

	"github.com/regatta-dev/regatta/spec"
)

// Decrypt decrypts a sops document and returns its plaintext as the sops
// CLI 3.13 prints it (`sops -d`). The store follows the file name as the
// CLI's does: .yaml/.yml YAML, .json JSON, .env dotenv, .ini INI, anything
// else binary (an encrypted YAML or dotenv document under another name is
// read as such). When allowed lists keys (a cluster's or tenant's
// spec.decryption), the file must be encrypted to them and only they are
// used. The MAC is verified before anything is returned. Errors are
// *FileError naming file, and wrap ErrNotEncrypted, ErrMalformed,
// ErrNotAllowed (*NotAllowedError), ErrNoKey (*NoKeyError with a *KeyError
// per key) or ErrIntegrity; they never hold plaintext.
func (k *Keyring) Decrypt(ctx context.Context, file string, data []byte, allowed *spec.Decryption) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, &FileError{File: file, Err: &malformedError{err: errors.New("parser failure")}}
		}
	}()
	out, err = k.decrypt(ctx, storeFor(file, data), data, allowed)
	if err != nil {
		return nil, &FileError{File: file, Err: err}
	}
	return out, nil
}

func (k *Keyring) decrypt(ctx context.Context, store store, data []byte, allowed *spec.Decryption) ([]byte, error) {
	tree, err := store.LoadEncryptedFile(data)
	if err != nil {
		if !IsEncrypted(data) {
			return nil, ErrNotEncrypted
		}
		return nil, &malformedError{err: err}
	}
	if err := checkAllowed(&tree.Metadata, allowed); err != nil {
		return nil, err
	}
	key, err := k.dataKey(ctx, &tree.Metadata, allowed)
	if err != nil {
		return nil, err
	}
	if err := verify(&tree, key); err != nil {
		return nil, err
	}
	return store.EmitPlainFile(tree.Branches)
}

// dataKey recovers the data key through the local and remote key
// services, recording why each key failed.
func (k *Keyring) dataKey(ctx context.Context, m *gosops.Metadata, allowed *spec.Decryption) ([]byte, error) {
	d := &decryption{k: k, ctx: ctx, allowed: allowed, errs: map[Key][]error{}, decrypted: map[Key]bool{}}
	var svcs []keyservice.KeyServiceClient
	if len(k.local) > 0 {
		svcs = append(svcs, &guard{d: d, svc: localService{d}})
	}
	for _, r := range k.remotes {
		svcs = append(svcs, &guard{d: d, svc: r.client, remote: r.uri})
	}
	if len(svcs) == 0 {
		return nil, errors.New("no key service: the local one decrypts no key type and no remote one is configured")
	}
	key, err := m.GetDataKeyWithKeyServices(svcs, gosops.DefaultDecryptionOrder)
	if err != nil {
		return nil, d.noKeyError(m)
	}
	return key, nil
}

// verify decrypts the tree in place and checks the MAC, as `sops -d`
// does.
func verify(tree *gosops.Tree, key []byte) error {
	cipher := aes.NewCipher()
	mac, err := tree.Decrypt(key, cipher)
	if err != nil {
		return &integrityError{detail: "a value cannot be decrypted (it was changed or moved after it was encrypted)"}
	}
	stored, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, key, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return &integrityError{detail: "the MAC cannot be decrypted (sops.mac or sops.lastmodified was changed)"}
	}
	s, ok := stored.(string)
	if !ok || s == "" || subtle.ConstantTimeCompare([]byte(s), []byte(mac)) != 1 {
		return &integrityError{detail: "MAC mismatch (the file was changed after it was encrypted)"}
	}
	return nil
}

// checkAllowed fails a file that does not have an allowed key in as many
// key groups as it needs.
func checkAllowed(m *gosops.Metadata, allowed *spec.Decryption) error {
	if allowed.IsEmpty() {
		return nil
	}
	usable := 0
	var names []string
	for _, g := range m.KeyGroups {
		ok := false
		for _, mk := range g {
			key := keyservice.KeyFromMasterKey(mk)
			id := idOf(&key)
			names = append(names, id.String())
			ok = ok || isAllowed(allowed, id)
		}
		if ok {
			usable++
		}
	}
	if need := threshold(m); usable < need {
		return &NotAllowedError{Keys: names, Threshold: need, Usable: usable}
	}
	return nil
}

// threshold is the number of key groups needed to recover the data key.
func threshold(m *gosops.Metadata) int {
	if len(m.KeyGroups) <= 1 {
		return 1
	}
	if m.ShamirThreshold > 0 {
		return m.ShamirThreshold
	}
	return len(m.KeyGroups)
}

// noKeyError lists, group by group, why each key did not decrypt (none
// for a group one of whose keys did).
func (d *decryption) noKeyError(m *gosops.Metadata) error {
	e := &NoKeyError{Threshold: threshold(m)}
	for _, g := range m.KeyGroups {
		var errs []*KeyError
		for _, mk := range g {
			key := keyservice.KeyFromMasterKey(mk)
			id := idOf(&key)
			if d.decrypted[id] {
				errs = nil
				break
			}
			errs = append(errs, &KeyError{Type: id.Type, ID: id.ID, Err: d.reason(id)})
		}
		e.Groups = append(e.Groups, errs)
	}
	return e
}

// reason is the most telling error recorded for a key: a key service's
// answer over "not tried here".
func (d *decryption) reason(id Key) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	errs := d.errs[id]
	for _, err := range errs {
		if !errors.Is(err, errNotHere) {
			return err
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return fmt.Errorf("not tried")
}
