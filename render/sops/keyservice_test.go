package sops

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/render/sops/sopstest"
	"github.com/regatta-dev/regatta/spec"
)

const (
	testARN      = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	testGCPKey   = "projects/fleet/locations/global/keyRings/sops/cryptoKeys/prod"
	testAzureKey = "https://fleet.vault.azure.net/keys/sops/0123456789abcdef0123456789abcdef"
	testVaultKey = "https://vault.example.com:8200/v1/transit/keys/prod"
)

// cloudCases are the cloud key types: the sops CLI flag, and the
// spec.decryption that allows the key.
var cloudCases = []struct {
	typ, flag, id string
	allow         spec.Decryption
}{
	{KeyTypeAWSKMS, "--kms", testARN, spec.Decryption{AWSKMSARNs: []string{testARN}}},
	{KeyTypeGCPKMS, "--gcp-kms", testGCPKey, spec.Decryption{GCPKMSResourceIDs: []string{testGCPKey}}},
	{KeyTypeAzureKV, "--azure-kv", testAzureKey, spec.Decryption{AzureKeyVaultURLs: []string{"https://fleet.vault.azure.net/keys/sops"}}},
	{KeyTypeVault, "--hc-vault-transit", testVaultKey, spec.Decryption{HCVaultTransitURIs: []string{testVaultKey}}},
}

// TestCloudKeysThroughAKeyService: the sops CLI encrypts to each cloud
// key type through a key service running in this test, and regatta
// decrypts through the same service; the restriction and a denied key
// give errors naming the key.
func TestCloudKeysThroughAKeyService(t *testing.T) {
	d := newCLIDir(t)
	ks := sopstest.StartKeyService(t)
	k, err := New(Options{KeyServices: []string{ks.URI}, LocalKeyTypes: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	d.write(t, "s.yaml", "stringData:\n  password: correct-horse-battery-staple\n")
	ctx := context.Background()
	for _, c := range cloudCases {
		t.Run(c.typ, func(t *testing.T) {
			enc := d.encrypt(t, nil, "s.yaml", "--keyservice", ks.URI, "--enable-local-keyservice=false", c.flag, c.id)
			before := ks.Decrypts(c.typ)
			got, err := k.Decrypt(ctx, "s.yaml", enc, nil)
			if err != nil || !bytes.Contains(got, []byte("correct-horse-battery-staple")) {
				t.Fatalf("decrypt: %v", err)
			}
			if ks.Decrypts(c.typ) != before+1 {
				t.Errorf("the key service was asked %d times", ks.Decrypts(c.typ)-before)
			}
			if _, err := k.Decrypt(ctx, "s.yaml", enc, &c.allow); err != nil {
				t.Errorf("allowed: %v", err)
			}
			_, err = k.Decrypt(ctx, "s.yaml", enc, &spec.Decryption{AgeRecipients: []string{d.age}})
			if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), typeNames[c.typ]+" key ") {
				t.Errorf("restricted: %v", err)
			}
		})
	}
	enc := d.encrypt(t, nil, "s.yaml", "--keyservice", ks.URI, "--enable-local-keyservice=false", "--kms", testARN)
	ks.Deny(testARN)
	_, err = k.Decrypt(ctx, "s.yaml", enc, nil)
	want := "s.yaml: sops: no key can decrypt the data key: AWS KMS key " + testARN + ": key service " + ks.URI
	if !errors.Is(err, ErrNoKey) || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "access denied") {
		t.Errorf("denied:\n got: %v\nwant: %s...access denied", err, want)
	}
}

// TestShamirKeyGroups: a file the sops CLI encrypted with three key
// groups (age, PGP, AWS KMS through the key service) and a threshold of
// two decrypts with any two, not with one, and a restriction must allow
// keys in two groups.
func TestShamirKeyGroups(t *testing.T) {
	d := newCLIDir(t)
	g := sopstest.NewGnuPG(t)
	fp := g.NewKey(t, "fleet")
	ks := sopstest.StartKeyService(t)
	d.write(t, ".sops.yaml", "creation_rules:\n- shamir_threshold: 2\n  key_groups:\n  - age: ["+d.age+"]\n  - pgp: ["+fp+"]\n  - kms: [{arn: \""+testARN+"\"}]\n")
	d.write(t, "s.yaml", "stringData:\n  password: correct-horse-battery-staple\n")
	enc := d.encrypt(t, g.Env(), "s.yaml", "--keyservice", ks.URI)
	if c := bytes.Count(enc, []byte("shamir_threshold: 2")); c != 1 {
		t.Fatalf("not a Shamir file:\n%s", enc)
	}
	ages := read(t, "age.key")
	ctx := context.Background()
	cases := []struct {
		name    string
		opts    Options
		allowed *spec.Decryption
		is      error
		msg     string
	}{
		{"age and PGP", Options{AgeKeys: ages, GnuPGHome: g.Home, LocalKeyTypes: []string{KeyTypeAge, KeyTypePGP}}, nil, nil, ""},
		{"PGP and KMS", Options{GnuPGHome: g.Home, KeyServices: []string{ks.URI}, LocalKeyTypes: []string{KeyTypePGP}}, nil, nil, ""},
		{"age only", Options{AgeKeys: ages, LocalKeyTypes: []string{KeyTypeAge}}, nil, ErrNoKey, "the data key needs 2 of 3 key groups, 1 decrypted: group 2: PGP key 0x" + fp + ": not tried: not decrypted locally"},
		{"restricted to two groups", Options{AgeKeys: ages, GnuPGHome: g.Home, KeyServices: []string{ks.URI}},
			&spec.Decryption{AgeRecipients: []string{d.age}, AWSKMSARNs: []string{testARN}}, nil, ""},
		{"restricted to one group", Options{AgeKeys: ages, GnuPGHome: g.Home, KeyServices: []string{ks.URI}},
			&spec.Decryption{AgeRecipients: []string{d.age}}, ErrNotAllowed, "2 key groups needed, 1 have an allowed key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, err := New(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = k.Close() })
			got, err := k.Decrypt(ctx, "s.yaml", enc, c.allowed)
			if c.is == nil {
				if err != nil || !bytes.Equal(got, d.cliDecrypt(t, append(g.Env(), "SOPS_KEYSERVICE="+ks.URI), "s.yaml", enc)) {
					t.Fatalf("decrypt: %v\n%s", err, got)
				}
				return
			}
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("got %v, want %v containing %q", err, c.is, c.msg)
			}
		})
	}
}

// TestMissingCloudCredentials: without credentials the local key service
// says what is missing, naming the key.
func TestMissingCloudCredentials(t *testing.T) {
	d := newCLIDir(t)
	ks := sopstest.StartKeyService(t)
	home := t.TempDir()
	for _, kv := range [][2]string{{"HOME", home}, {"AWS_EC2_METADATA_DISABLED", "true"}, {"AWS_ACCESS_KEY_ID", ""},
		{"AWS_SECRET_ACCESS_KEY", ""}, {"AWS_PROFILE", ""}, {"AWS_CONFIG_FILE", filepath.Join(home, "none")},
		{"AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "none")}, {"AWS_WEB_IDENTITY_TOKEN_FILE", ""},
		{"AWS_CONTAINER_CREDENTIALS_FULL_URI", ""}, {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", ""}, {"VAULT_TOKEN", ""}} {
		t.Setenv(kv[0], kv[1])
	}
	d.write(t, "s.yaml", "stringData:\n  password: correct-horse-battery-staple\n")
	k, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ flag, id, want string }{
		{"--kms", testARN, "AWS KMS key " + testARN + ": no AWS credentials"},
		{"--hc-vault-transit", "http://127.0.0.1:1/v1/transit/keys/prod", "Vault transit key http://127.0.0.1:1/v1/transit/keys/prod: no Vault token"},
	} {
		enc := d.encrypt(t, nil, "s.yaml", "--keyservice", ks.URI, "--enable-local-keyservice=false", c.flag, c.id)
		_, err := k.Decrypt(t.Context(), "s.yaml", enc, nil)
		if !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v\nwant it to contain %q", err, c.want)
		}
	}
}
