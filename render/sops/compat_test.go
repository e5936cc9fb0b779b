package sops

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestCompatWithSops decrypts files that sops encrypted in several
// variants (rules, mac_only_encrypted, Shamir groups, multi-document,
// anchors, every scalar type) and compares the result with sops' own
// decryption, kept beside them by the generator.
func TestCompatWithSops(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "compat", "*.enc.*"))
	if len(files) < 9 {
		t.Fatalf("found %d compat fixtures; run: cd render/sops/testdata/gen && go run .", len(files))
	}
	k := keyring(t, "age.key", "other.key")
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			got, err := k.Decrypt(name, read(t, filepath.Join("compat", name)), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := read(t, filepath.Join("compat", strings.Replace(name, ".enc.", ".sops.", 1)))
			g, w := documents(t, name, got), documents(t, name, want)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("differs from sops:\n--- render/sops\n%s\n--- sops\n%s", got, want)
			}
		})
	}
}

func TestCompatShamirNeedsBothGroups(t *testing.T) {
	_, err := keyring(t, "age.key").Decrypt("s.yaml", read(t, "compat/types-shamir.enc.yaml"), nil)
	if !errors.Is(err, ErrNoKey) {
		t.Fatalf("one share of two: %v", err)
	}
}

func documents(t *testing.T, name string, data []byte) []any {
	t.Helper()
	if strings.HasSuffix(name, ".json") {
		var v any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		return []any{v}
	}
	var docs []any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, v)
	}
}
