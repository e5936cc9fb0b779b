package verify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
)

// AllowedSignersFile is the name of the SSH signers file in a keys folder.
const AllowedSignersFile = "allowed_signers"

// Keys are the keys the platform trusts.
type Keys struct {
	// PGP are the trusted OpenPGP keys.
	PGP openpgp.EntityList
	// SSH are the lines of the allowed_signers file.
	SSH []AllowedSigner
}

// LoadKeys reads a folder (a mounted Secret): OpenPGP public keys in
// files named *.asc, *.gpg or *.pgp (armored or binary, several per file)
// and SSH signers in a file named allowed_signers, in git's format.
// Hidden files (a Secret volume's ..data) and YAML files (a signers
// policy kept in the same Secret) are skipped; any other file is an
// error, so a misnamed key is not silently left out. Every file's
// errors are collected.
func LoadKeys(dir string) (*Keys, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("trusted keys: %w", err)
	}
	k := &Keys{}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
			continue // a Secret volume's own files; a signers policy beside the keys
		}
		if err := k.loadFile(filepath.Join(dir, name)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(k.PGP) == 0 && len(k.SSH) == 0 {
		return nil, fmt.Errorf("trusted keys: %s holds no key: add *.asc files or an %s file", dir, AllowedSignersFile)
	}
	return k, nil
}

func (k *Keys) loadFile(path string) error {
	name := filepath.Base(path)
	isPGP := strings.HasSuffix(name, ".asc") || strings.HasSuffix(name, ".gpg") || strings.HasSuffix(name, ".pgp")
	if !isPGP && name != AllowedSignersFile {
		return fmt.Errorf("%s: not a key file: name OpenPGP keys *.asc, *.gpg or *.pgp, SSH signers %s", path, AllowedSignersFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !isPGP {
		signers, err := ParseAllowedSigners(path, b)
		k.SSH = append(k.SSH, signers...)
		return err
	}
	list, err := readKeyRing(b)
	if err != nil {
		return fmt.Errorf("%s: not an OpenPGP public key: %w", path, err)
	}
	k.PGP = append(k.PGP, list...)
	return nil
}

func readKeyRing(b []byte) (openpgp.EntityList, error) {
	if bytes.Contains(b, []byte("-----BEGIN PGP")) {
		return openpgp.ReadArmoredKeyRing(bytes.NewReader(b))
	}
	return openpgp.ReadKeyRing(bytes.NewReader(b))
}
