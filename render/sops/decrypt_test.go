package sops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/regatta-dev/regatta/spec"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// plaintexts must never appear in an error message.
var plaintexts = []string{"correct-horse-battery-staple", "json-test-password", "dGVzdC10b2tlbg", "test-token"}

func keyring(t testing.TB, files ...string) *Keyring {
	t.Helper()
	var all []byte
	for _, f := range files {
		all = append(all, read(t, f)...)
	}
	k, err := LoadAgeKeys(all)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func read(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestDecryptSecretYAML(t *testing.T) {
	got, err := keyring(t, "age.key").Decrypt(context.Background(), "secrets/db.yaml", read(t, "secret.enc.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "secret.dec.yaml", got)
	if !bytes.Contains(got, []byte("password: correct-horse-battery-staple")) || bytes.Contains(got, []byte("sops:")) {
		t.Errorf("unexpected plaintext:\n%s", got)
	}
}

func TestDecryptJSON(t *testing.T) {
	k := keyring(t, "age.key")
	got, err := k.Decrypt(context.Background(), "config.enc.json", read(t, "config.enc.json"), &spec.Decryption{AgeRecipients: k.Recipients()})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "config.dec.json", got)
	var doc struct {
		Database struct {
			Password string
			Port     int
			Ratio    float64
			TLS      bool
			Hosts    []string
		}
		Sops any
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	d := doc.Database
	if d.Password != "json-test-password" || d.Port != 5432 || d.Ratio != 0.5 || !d.TLS || len(d.Hosts) != 2 || doc.Sops != nil {
		t.Errorf("decoded %+v", doc)
	}
}

func TestDecryptErrors(t *testing.T) {
	main := keyring(t, "age.key")
	both := keyring(t, "age.key", "other.key")
	other := both.Recipients()[1]
	mainR := main.Recipients()[0]
	cases := []struct {
		name, file, fixture string
		k                   *Keyring
		allowed             []string
		is                  error
		msg                 string
	}{
		{"wrong key", "secrets/db.yaml", "wrongkey.enc.yaml", main, nil, ErrNoKey,
			"secrets/db.yaml: sops: no key can decrypt the data key: age key " + other[:12] + "…: no identity for this recipient among the 1 configured age keys"},
		{"tampered", "secrets/db.yaml", "tampered.enc.yaml", main, nil, ErrIntegrity,
			"secrets/db.yaml: sops: integrity check failed: MAC mismatch (the file was changed after it was encrypted)"},
		{"restricted", "secrets/db.yaml", "secret.enc.yaml", both, []string{other}, ErrNotAllowed,
			"secrets/db.yaml: sops: not encrypted to a key this cluster may use (spec.decryption); keys in file: age key " + mainR[:12] + "…"},
		{"restricted to unknown", "c.json", "config.enc.json", both, []string{"age1unknown"}, ErrNoKey,
			"c.json: sops: not encrypted to a key this cluster may use (spec.decryption); keys in file: age key " + mainR[:12] + "…, age key " + other[:12] + "…"},
		{"not encrypted", "plain.yaml", "plain/secret.yaml", main, nil, ErrNotEncrypted,
			"plain.yaml: sops: document is not encrypted with sops"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.k.Decrypt(context.Background(), c.file, read(t, c.fixture), &spec.Decryption{AgeRecipients: c.allowed})
			if err == nil || out != nil {
				t.Fatalf("want error, got %q", out)
			}
			var fe *FileError
			if !errors.Is(err, c.is) || !errors.As(err, &fe) || fe.File != c.file {
				t.Errorf("error %v: want errors.Is %v and a *FileError for %s", err, c.is, c.file)
			}
			if err.Error() != c.msg {
				t.Errorf("message\n got: %s\nwant: %s", err, c.msg)
			}
			assertNoPlaintext(t, err.Error())
		})
	}
}

func TestAllowedRecipientPermits(t *testing.T) {
	both := keyring(t, "age.key", "other.key")
	other := both.Recipients()[1]
	if _, err := both.Decrypt(context.Background(), "c.json", read(t, "config.enc.json"), &spec.Decryption{AgeRecipients: []string{other}}); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentDecrypt(t *testing.T) {
	k := keyring(t, "age.key", "other.key")
	files := map[string][]byte{"s.yaml": read(t, "secret.enc.yaml"), "c.json": read(t, "config.enc.json")}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		for name, data := range files {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := k.Decrypt(context.Background(), name, data, nil); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
}

func assertNoPlaintext(t testing.TB, msg string) {
	t.Helper()
	for _, p := range plaintexts {
		if strings.Contains(msg, p) {
			t.Errorf("message leaks plaintext %q: %s", p, msg)
		}
	}
	if strings.Contains(msg, "AGE-SECRET-KEY") {
		t.Errorf("message leaks key material: %s", msg)
	}
}
