package sops

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/getsops/sops/v3/version"
)

func TestEncryptRoundTrip(t *testing.T) {
	keys, err := LoadAgeKeyFile("testdata/age.key")
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: c1-kubeconfig\n  namespace: regatta-system\nstringData:\n  value: top-secret-kubeconfig\n")
	enc, err := Encrypt("kubeconfig.yaml", plain, SecretRegex, keys.Recipients())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(enc, []byte("top-secret-kubeconfig")) || !bytes.Contains(enc, []byte("name: c1-kubeconfig")) || !IsEncrypted(enc) {
		t.Fatalf("not encrypted as a Secret:\n%s", enc)
	}
	dec, err := keys.Decrypt(context.Background(), "kubeconfig.yaml", enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(dec, []byte("value: top-secret-kubeconfig")) {
		t.Errorf("round trip lost the value:\n%s", dec)
	}
	other, _ := os.ReadFile("testdata/other.key")
	otherKeys, _ := LoadAgeKeys(other)
	if _, err := otherKeys.Decrypt(context.Background(), "kubeconfig.yaml", enc, nil); err == nil {
		t.Error("another key decrypted it")
	}
}

// TestSopsVersion: Encrypt writes the linked library's version, as sops'
// own version package has it.
func TestSopsVersion(t *testing.T) {
	if got := sopsVersion(); got != version.Version {
		t.Errorf("sopsVersion() = %q, want %q", got, version.Version)
	}
	if sopsFallbackVersion != version.Version {
		t.Errorf("sopsFallbackVersion = %q: go.mod has sops %q", sopsFallbackVersion, version.Version)
	}
}
