package sops

import (
	"bytes"
	"context"
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
		if _, err := k.Decrypt(context.Background(), name, data, nil); err != nil {
			assertNoPlaintext(t, err.Error())
		}
	})
}
