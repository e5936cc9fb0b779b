// Command gen writes the encrypted fixtures of render/sops/testdata with
// TEST age keys (kept beside them; never use them for anything real).
//
//	cd render/sops/testdata/gen && go run .
//
// It is a module of its own (it links sops and the cloud SDKs of sops' key
// services, which regatta does not need), so it runs from its folder.
//
// Keys are created once and reused; fixtures are re-encrypted on every run.
package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"filippo.io/age"
	gosops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keys"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
)

const dir = ".."

type codec interface {
	LoadPlainFile(in []byte) (gosops.TreeBranches, error)
	EmitEncryptedFile(in gosops.Tree) ([]byte, error)
	LoadEncryptedFile(in []byte) (gosops.Tree, error)
	EmitPlainFile(in gosops.TreeBranches) ([]byte, error)
}

func main() {
	main, other := identity("age.key"), identity("other.key")
	mainR, otherR := main.Recipient().String(), other.Recipient().String()
	yml := sopsyaml.NewStore(&config.YAMLStoreConfig{})
	jsn := sopsjson.NewStore(&config.JSONStoreConfig{})
	secretRegex := "^(data|stringData)$"
	write("secret.enc.yaml", encrypt(yml, "plain/secret.yaml", secretRegex, mainR))
	write("config.enc.json", encrypt(jsn, "plain/config.json", "", mainR, otherR))
	write("wrongkey.enc.yaml", encrypt(yml, "plain/secret.yaml", secretRegex, otherR))
	write("tampered.enc.yaml", tamper(read("secret.enc.yaml")))
	compat(yml, jsn, mainR, otherR)
}

// tamper changes an unencrypted value that the MAC covers.
func tamper(in []byte) []byte {
	out := bytes.Replace(in, []byte("namespace: payments"), []byte("namespace: kube-system"), 1)
	if bytes.Equal(in, out) {
		log.Fatal("tamper: namespace line not found")
	}
	return out
}

func encrypt(st codec, plainFile, encryptedRegex string, recipients ...string) []byte {
	branches, err := st.LoadPlainFile(read(plainFile))
	check(err)
	mks, err := sopsage.MasterKeysFromRecipients(strings.Join(recipients, ","))
	check(err)
	group := gosops.KeyGroup{}
	for _, k := range mks {
		group = append(group, keys.MasterKey(k))
	}
	tree := gosops.Tree{Branches: branches, Metadata: gosops.Metadata{
		KeyGroups:      []gosops.KeyGroup{group},
		EncryptedRegex: encryptedRegex,
		Version:        "3.13.3",
		LastModified:   time.Now().UTC().Truncate(time.Second),
	}}
	dataKey := make([]byte, 32)
	_, err = rand.Read(dataKey)
	check(err)
	for _, k := range group {
		check(k.Encrypt(dataKey))
	}
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(dataKey, cipher)
	check(err)
	tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, dataKey,
		tree.Metadata.LastModified.Format(time.RFC3339))
	check(err)
	out, err := st.EmitEncryptedFile(tree)
	check(err)
	return out
}

// identity loads a test key, creating it on first use.
func identity(name string) *age.X25519Identity {
	p := filepath.Join(dir, name)
	if data, err := os.ReadFile(p); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "AGE-SECRET-KEY-1") {
				id, err := age.ParseX25519Identity(line)
				check(err)
				return id
			}
		}
	}
	id, err := age.GenerateX25519Identity()
	check(err)
	content := fmt.Sprintf("# TEST KEY for regatta's render/sops tests only. Not a secret.\n# public key: %s\n%s\n",
		id.Recipient(), id)
	write(name, []byte(content))
	return id
}

func read(name string) []byte {
	data, err := os.ReadFile(filepath.Join(dir, name))
	check(err)
	return data
}

func write(name string, data []byte) {
	check(os.WriteFile(filepath.Join(dir, name), data, 0o644))
	log.Printf("wrote %s", filepath.Join(dir, name))
}

func fatal(v any) { log.Fatal(v) }

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
