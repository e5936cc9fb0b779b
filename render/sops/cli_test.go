package sops

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/render/sops/sopstest"
	"github.com/regatta-dev/regatta/spec"
)

// cliDir is a folder with the test age key and plain files, where the
// sops CLI encrypts.
type cliDir struct {
	dir string
	age string // the recipient of testdata/age.key
	env []string
}

func newCLIDir(t *testing.T) *cliDir {
	t.Helper()
	d := &cliDir{dir: t.TempDir()}
	key := read(t, "age.key")
	if err := os.WriteFile(filepath.Join(d.dir, "age.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	d.age = keyring(t, "age.key").Recipients()[0]
	d.env = []string{"SOPS_AGE_KEY_FILE=" + filepath.Join(d.dir, "age.key")}
	return d
}

func (d *cliDir) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(d.dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// encrypt runs `sops encrypt args... name` and returns the encrypted file.
func (d *cliDir) encrypt(t *testing.T, env []string, name string, args ...string) []byte {
	t.Helper()
	args = append(append([]string{"encrypt"}, args...), name)
	return sopstest.Sops(t, d.dir, append(append([]string{}, d.env...), env...), nil, args...)
}

// cliDecrypt is what `sops decrypt` prints for the encrypted content
// stored under name.
func (d *cliDir) cliDecrypt(t *testing.T, env []string, name string, enc []byte) []byte {
	t.Helper()
	d.write(t, "enc-"+name, string(enc))
	return sopstest.Sops(t, d.dir, append(append([]string{}, d.env...), env...), nil, "decrypt", "enc-"+name)
}

var storeCases = map[string]string{
	"multi.yaml":   "# a comment\napiVersion: v1\nkind: Secret\nmetadata:\n  name: a # inline\nstringData:\n  password: correct-horse-battery-staple\n  list: [1, 2.5, true, null, x]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: |\n    multi\n    line\n",
	"config.json":  `{"database": {"password": "json-test-password", "port": 5432, "ratio": 0.5, "tls": true, "hosts": ["a", "b"]}, "empty": {}}`,
	"app.env":      "# comment\nUSER=app\nPASSWORD=correct-horse-battery-staple\nEMPTY=\n",
	"settings.ini": "[db]\nuser = app\npassword = correct-horse-battery-staple\n",
	"blob.bin":     "binary\x00\x01test-token\n",
	"kubeconfig":   "apiVersion: v1\nkind: Config\nusers: [{name: u, user: {token: test-token}}]\n",
}

// TestDecryptStoresAsTheCLI: every store decrypts byte for byte as
// `sops decrypt` prints it.
func TestDecryptStoresAsTheCLI(t *testing.T) {
	d := newCLIDir(t)
	k := keyring(t, "age.key")
	for name, plain := range storeCases {
		t.Run(name, func(t *testing.T) {
			d.write(t, name, plain)
			var args []string
			if name == "kubeconfig" {
				args = []string{"--input-type", "yaml", "--output-type", "yaml"}
			}
			enc := d.encrypt(t, nil, name, append(args, "--age", d.age)...)
			if !IsEncrypted(enc) {
				t.Fatalf("IsEncrypted is false for\n%s", enc)
			}
			got, err := k.Decrypt(context.Background(), name, enc, nil)
			if err != nil {
				t.Fatal(err)
			}
			var want []byte
			if name == "kubeconfig" {
				d.write(t, "enc-"+name, string(enc))
				want = sopstest.Sops(t, d.dir, d.env, nil, "decrypt", "--input-type", "yaml", "--output-type", "yaml", "enc-"+name)
			} else {
				want = d.cliDecrypt(t, nil, name, enc)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("differs from sops decrypt:\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

// TestTamperedFileIsRefusedAsByTheCLI: a changed value fails the MAC
// check, here and in the CLI.
func TestTamperedFileIsRefusedAsByTheCLI(t *testing.T) {
	d := newCLIDir(t)
	d.write(t, "s.yaml", "metadata:\n  name: db\nstringData:\n  password: correct-horse-battery-staple\n")
	enc := d.encrypt(t, nil, "s.yaml", "--age", d.age, "--encrypted-regex", SecretRegex)
	tampered := bytes.Replace(enc, []byte("name: db"), []byte("name: dc"), 1)
	if bytes.Equal(tampered, enc) {
		t.Fatal("nothing replaced")
	}
	_, err := keyring(t, "age.key").Decrypt(context.Background(), "s.yaml", tampered, nil)
	if !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "MAC mismatch") {
		t.Fatalf("got %v, want a MAC mismatch", err)
	}
	d.write(t, "t.yaml", string(tampered))
	if _, err := sopstest.SopsErr(t, d.dir, d.env, nil, "decrypt", "t.yaml"); err == nil || !strings.Contains(err.Error(), "MAC mismatch") {
		t.Errorf("the CLI did not refuse it: %v", err)
	}
}

func TestDecryptPGP(t *testing.T) {
	d := newCLIDir(t)
	g := sopstest.NewGnuPG(t)
	fp := g.NewKey(t, "fleet")
	other := g.NewKey(t, "other")
	d.write(t, "s.yaml", "stringData:\n  password: correct-horse-battery-staple\n")
	enc := d.encrypt(t, g.Env(), "s.yaml", "--pgp", fp)
	k, err := New(Options{GnuPGHome: g.Home})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := k.Decrypt(ctx, "s.yaml", enc, nil)
	if err != nil || !bytes.Equal(got, d.cliDecrypt(t, g.Env(), "s.yaml", enc)) {
		t.Fatalf("decrypt: %v\n%s", err, got)
	}
	if _, err := k.Decrypt(ctx, "s.yaml", enc, &spec.Decryption{PGPFingerprints: []string{"0x" + strings.ToLower(fp)}}); err != nil {
		t.Errorf("allowed fingerprint: %v", err)
	}
	_, err = k.Decrypt(ctx, "s.yaml", enc, &spec.Decryption{PGPFingerprints: []string{other}})
	if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "PGP key 0x"+fp) {
		t.Errorf("other fingerprint: %v", err)
	}
	g.DeleteSecretKey(t, fp)
	_, err = k.Decrypt(ctx, "s.yaml", enc, nil)
	want := "s.yaml: sops: no key can decrypt the data key: PGP key 0x" + fp + ": PGP key 0x" + fp + " not in the keyring (" + g.Home + ")"
	if !errors.Is(err, ErrNoKey) || err == nil || err.Error() != want {
		t.Errorf("deleted key:\n got: %v\nwant: %s", err, want)
	}
}

// TestRestrictionHoldsAgainstForgedMetadata: a file whose metadata names
// an allowed key but whose data key was encrypted to another key is not
// decrypted by that other key (the metadata is not covered by the MAC).
func TestRestrictionHoldsAgainstForgedMetadata(t *testing.T) {
	d := newCLIDir(t)
	g := sopstest.NewGnuPG(t)
	allowedFP := g.NewKey(t, "allowed")
	forbiddenFP := g.NewKey(t, "forbidden")
	d.write(t, "s.yaml", "stringData:\n  password: correct-horse-battery-staple\n")
	ctx := context.Background()

	enc := d.encrypt(t, g.Env(), "s.yaml", "--pgp", forbiddenFP)
	forged := bytes.ReplaceAll(enc, []byte(forbiddenFP), []byte(allowedFP))
	k, _ := New(Options{GnuPGHome: g.Home})
	_, err := k.Decrypt(ctx, "s.yaml", forged, &spec.Decryption{PGPFingerprints: []string{allowedFP}})
	if !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), "which spec.decryption does not list") {
		t.Errorf("PGP: %v", err)
	}

	both := keyring(t, "age.key", "other.key")
	otherR := both.Recipients()[1]
	enc = d.encrypt(t, nil, "s.yaml", "--age", otherR)
	forged = bytes.ReplaceAll(enc, []byte(otherR), []byte(d.age))
	_, err = both.Decrypt(ctx, "s.yaml", forged, &spec.Decryption{AgeRecipients: []string{d.age}})
	if !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), "does not decrypt the data key") {
		t.Errorf("age: %v", err)
	}
}
