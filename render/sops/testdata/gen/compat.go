package main

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	gosops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/keys"
	regattasops "github.com/regatta-dev/regatta/render/sops"
)

// variant is one way of encrypting a plain compat file.
type variant struct {
	name   string
	plain  string
	rules  gosops.Metadata // only the rule fields are used
	groups int             // 2: one group per key, threshold 2 (Shamir)
}

// compat encrypts testdata/compat/*.{yaml,json} with sops in several
// variants and writes, beside each, sops' own decryption (*.sops.*). The
// tests compare render/sops' output with these, so the package is checked
// against sops without linking it.
func compat(yml, jsn codec, mainR, otherR string) {
	variants := []variant{
		{name: "types-default", plain: "types.yaml"},
		{name: "types-encrypted-regex", plain: "types.yaml", rules: gosops.Metadata{EncryptedRegex: "^(string|int|list|primary)$"}},
		{name: "types-unencrypted-regex", plain: "types.yaml", rules: gosops.Metadata{UnencryptedRegex: "^(date|float)$"}},
		{name: "types-encrypted-suffix", plain: "types.yaml", rules: gosops.Metadata{EncryptedSuffix: "ing"}},
		{name: "types-mac-only-encrypted", plain: "types.yaml", rules: gosops.Metadata{EncryptedRegex: "^list$", MACOnlyEncrypted: true}},
		{name: "types-shamir", plain: "types.yaml", groups: 2},
		{name: "multi", plain: "multi.yaml", rules: gosops.Metadata{EncryptedRegex: "^(data|stringData)$"}},
		{name: "json-default", plain: "types.json"},
		{name: "json-unencrypted-regex", plain: "types.json", rules: gosops.Metadata{UnencryptedRegex: "^(i|list)$"}},
	}
	for _, v := range variants {
		st, ext := yml, ".yaml"
		if strings.HasSuffix(v.plain, ".json") {
			st, ext = jsn, ".json"
		}
		enc := encryptVariant(st, v, mainR, otherR)
		write(filepath.Join("compat", v.name+".enc"+ext), enc)
		write(filepath.Join("compat", v.name+".sops"+ext), sopsDecrypt(st, enc))
	}
	// Files encrypted by render/sops.Encrypt must open with sops itself.
	for _, o := range []struct{ name, plain, regex string }{
		{"ours-types", "types.yaml", ""}, {"ours-secrets", "multi.yaml", regattasops.SecretRegex}, {"ours-json", "types.json", ""},
	} {
		st, ext := yml, ".yaml"
		if strings.HasSuffix(o.plain, ".json") {
			st, ext = jsn, ".json"
		}
		enc, err := regattasops.Encrypt(o.plain, read(filepath.Join("compat", o.plain)), o.regex, []string{mainR, otherR})
		check(err)
		write(filepath.Join("compat", o.name+".enc"+ext), enc)
		write(filepath.Join("compat", o.name+".sops"+ext), sopsDecrypt(st, enc))
	}
}

func encryptVariant(st codec, v variant, mainR, otherR string) []byte {
	branches, err := st.LoadPlainFile(read(filepath.Join("compat", v.plain)))
	check(err)
	meta := v.rules
	if meta.EncryptedRegex == "" && meta.UnencryptedRegex == "" && meta.EncryptedSuffix == "" {
		meta.UnencryptedSuffix = "_unencrypted" // what the sops CLI records by default
	}
	meta.Version, meta.LastModified = "3.13.3", time.Now().UTC().Truncate(time.Second)
	meta.KeyGroups = []gosops.KeyGroup{ageGroup(mainR, otherR)}
	if v.groups == 2 {
		meta.KeyGroups = []gosops.KeyGroup{ageGroup(mainR), ageGroup(otherR)}
		meta.ShamirThreshold = 2
	}
	tree := gosops.Tree{Branches: branches, Metadata: meta}
	dataKey, errs := tree.GenerateDataKey()
	if len(errs) > 0 {
		fatal(errs)
	}
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(dataKey, cipher)
	check(err)
	tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, dataKey, tree.Metadata.LastModified.Format(time.RFC3339))
	check(err)
	out, err := st.EmitEncryptedFile(tree)
	check(err)
	return out
}

func ageGroup(recipients ...string) gosops.KeyGroup {
	mks, err := sopsage.MasterKeysFromRecipients(strings.Join(recipients, ","))
	check(err)
	var g gosops.KeyGroup
	for _, k := range mks {
		g = append(g, keys.MasterKey(k))
	}
	return g
}

// sopsDecrypt decrypts with sops itself (identities from SOPS_AGE_KEY_FILE).
func sopsDecrypt(st codec, enc []byte) []byte {
	both := filepath.Join(os.TempDir(), "regatta-sops-gen-keys.txt")
	check(os.WriteFile(both, append(read("age.key"), read("other.key")...), 0o600))
	defer os.Remove(both)
	check(os.Setenv("SOPS_AGE_KEY_FILE", both))
	tree, err := st.LoadEncryptedFile(enc)
	check(err)
	key, err := tree.Metadata.GetDataKey()
	check(err)
	cipher := aes.NewCipher()
	mac, err := tree.Decrypt(key, cipher)
	check(err)
	stored, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, key, tree.Metadata.LastModified.Format(time.RFC3339))
	check(err)
	if stored != mac {
		fatal("sops: MAC mismatch on its own file")
	}
	out, err := st.EmitPlainFile(tree.Branches)
	check(err)
	return out
}
