package sops

import (
	"crypto/rand"
	"fmt"
	"path"
	"strings"
	"time"

	gosops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keys"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
)

// SecretRegex encrypts the values of a Kubernetes Secret and leaves its
// metadata readable, as `sops --encrypted-regex '^(data|stringData)$'` does.
const SecretRegex = "^(data|stringData)$"

// Encrypt encrypts a YAML or JSON document (by file extension) to the given
// age recipients, as the sops CLI would. encryptedRegex limits which keys
// are encrypted (empty: all). It exists so tests and `make demo` can
// produce encrypted files without the sops CLI; operators use sops itself.
func Encrypt(file string, plain []byte, encryptedRegex string, recipients []string) ([]byte, error) {
	type codec interface {
		LoadPlainFile(in []byte) (gosops.TreeBranches, error)
		EmitEncryptedFile(in gosops.Tree) ([]byte, error)
	}
	var st codec = sopsyaml.NewStore(&config.YAMLStoreConfig{})
	if path.Ext(file) == ".json" {
		st = sopsjson.NewStore(&config.JSONStoreConfig{})
	}
	branches, err := st.LoadPlainFile(plain)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	mks, err := sopsage.MasterKeysFromRecipients(strings.Join(recipients, ","))
	if err != nil {
		return nil, fmt.Errorf("%s: recipients: %w", file, err)
	}
	group := gosops.KeyGroup{}
	for _, k := range mks {
		group = append(group, keys.MasterKey(k))
	}
	tree := gosops.Tree{Branches: branches, Metadata: gosops.Metadata{
		KeyGroups: []gosops.KeyGroup{group}, EncryptedRegex: encryptedRegex,
		Version: "3.13.3", LastModified: time.Now().UTC().Truncate(time.Second),
	}}
	dataKey := make([]byte, 32)
	if _, err := rand.Read(dataKey); err != nil {
		return nil, err
	}
	for _, k := range group {
		if err := k.Encrypt(dataKey); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(dataKey, cipher)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, dataKey, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return st.EmitEncryptedFile(tree)
}
