package sops

import (
	"bytes"
	"testing"
)

// FuzzDecrypt feeds mutated sops documents to IsEncrypted and Decrypt:
// neither may panic, and an error may never carry plaintext.
// Run with: go test -fuzz FuzzDecrypt ./render/sops
func FuzzDecrypt(f *testing.F) {
	for _, name := range []string{"secret.enc.yaml", "config.enc.json", "tampered.enc.yaml", "wrongkey.enc.yaml", "plain/secret.yaml"} {
		data := read(f, name)
		f.Add(name, data)
		f.Add(name, data[:len(data)/2])
		f.Add(name, bytes.Replace(data, []byte("ENC[AES256_GCM,"), []byte("ENC[AES256_GCM,type:int,"), 1))
	}
	f.Add("x.yaml", []byte("sops:\n  mac: 1\n  version: 1\n  age: [{enc: x, recipient: y}]\n"))
	f.Add("x.json", []byte(`{"sops":{"mac":"ENC[]","lastmodified":"x","age":[{"enc":"-----BEGIN AGE ENCRYPTED FILE-----"}]}}`))
	k := keyring(f, "age.key")
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		IsEncrypted(data)
		if _, err := k.Decrypt(name, data, nil); err != nil {
			assertNoPlaintext(t, err.Error())
		}
	})
}

// FuzzEncryptRoundTrip encrypts arbitrary YAML and decrypts it again: the
// result must equal the input's documents (comments aside).
func FuzzEncryptRoundTrip(f *testing.F) {
	for _, name := range []string{"plain/secret.yaml", "compat/types.yaml", "compat/multi.yaml"} {
		f.Add(read(f, name))
	}
	f.Add([]byte("a: [1, 2.5, true, null, '', x]\nb: {c: 2024-01-01T00:00:00Z}\n"))
	k := keyring(f, "age.key")
	f.Fuzz(func(t *testing.T, plain []byte) {
		enc, err := Encrypt("f.yaml", plain, "", k.Recipients())
		if err != nil {
			return // not a document sops can encrypt
		}
		dec, err := k.Decrypt("f.yaml", enc, nil)
		if err != nil {
			t.Fatalf("round trip: %v\ninput: %q", err, plain)
		}
		want, _ := parseYAML(plain)
		got, _ := parseYAML(dec)
		if !sameDocs(got, want) {
			t.Fatalf("round trip changed the document\ninput: %q\noutput: %q", plain, dec)
		}
	})
}

func sameDocs(a, b []*node) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(mustJSON(a[i]), mustJSON(b[i])) {
			return false
		}
	}
	return true
}

func mustJSON(n *node) []byte {
	var b bytes.Buffer
	if err := writeJSON(&b, n); err != nil {
		return []byte(err.Error())
	}
	return b.Bytes()
}
