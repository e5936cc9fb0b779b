package sops

import (
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	gosops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/keyservice"
)

// SecretRegex encrypts the values of a Kubernetes Secret and leaves its
// metadata readable, as `sops --encrypted-regex '^(data|stringData)$'` does.
const SecretRegex = "^(data|stringData)$"

// Encrypt encrypts a document (its store chosen by the file name, as
// Decrypt chooses it) to the given age recipients with the sops library,
// as `sops -e --age ...` does. encryptedRegex limits which keys are
// encrypted (empty: all but keys ending in _unencrypted, sops' default).
// It exists so tests and `make demo` can write encrypted files without
// the sops CLI; operators use sops itself.
func Encrypt(file string, plain []byte, encryptedRegex string, recipients []string) ([]byte, error) {
	out, err := encrypt(storeFor(file, nil), plain, encryptedRegex, recipients)
	if err != nil {
		return nil, fmt.Errorf("%s: sops: %w", file, err)
	}
	return out, nil
}

func encrypt(st store, plain []byte, encryptedRegex string, recipients []string) ([]byte, error) {
	branches, err := st.LoadPlainFile(plain)
	if err != nil {
		return nil, err
	}
	if len(recipients) == 0 {
		return nil, fmt.Errorf("no recipients")
	}
	var group gosops.KeyGroup
	for _, r := range recipients {
		mk, err := sopsage.MasterKeyFromRecipient(r)
		if err != nil {
			return nil, fmt.Errorf("recipient %s: not an age public key", abbreviate(r))
		}
		group = append(group, mk)
	}
	tree := gosops.Tree{Branches: branches, Metadata: gosops.Metadata{
		KeyGroups:      []gosops.KeyGroup{group},
		EncryptedRegex: encryptedRegex,
		Version:        sopsVersion(),
	}}
	if encryptedRegex == "" {
		tree.Metadata.UnencryptedSuffix = gosops.DefaultUnencryptedSuffix
	}
	return seal(st, tree)
}

// seal generates the data key, encrypts the tree and its MAC, and emits
// the encrypted file (sops' common.EncryptTree, which lives in the CLI).
func seal(st store, tree gosops.Tree) ([]byte, error) {
	local := []keyservice.KeyServiceClient{keyservice.NewLocalClient()}
	key, errs := tree.GenerateDataKeyWithKeyServices(local)
	if len(errs) > 0 {
		return nil, fmt.Errorf("wrapping the data key: %v", errs)
	}
	cipher := aes.NewCipher()
	tree.Metadata.LastModified = time.Now().UTC()
	mac, err := tree.Encrypt(key, cipher)
	if err != nil {
		return nil, err
	}
	tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, key, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return nil, err
	}
	return st.EmitEncryptedFile(tree)
}

// sopsVersion is the version of the linked sops library, which the sops
// CLI writes as sops.version. It is read from the build information rather
// than from sops' version package: that package is the CLI's update check
// (urfave/cli, semver, an HTTP client) and nothing else here needs it.
func sopsVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == sopsModule {
				if m.Replace != nil {
					m = m.Replace
				}
				return strings.TrimPrefix(m.Version, "v")
			}
		}
	}
	return sopsFallbackVersion
}

const (
	sopsModule = "github.com/getsops/sops/v3"
	// sopsFallbackVersion is written when the binary carries no build
	// information (go.mod's version of sops).
	sopsFallbackVersion = "3.13.3"
)
