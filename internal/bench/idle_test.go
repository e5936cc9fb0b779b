package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/render/sops"
)

// TestIdleFleet checks the idle bench's fleet: every kubeconfig Secret and
// every profile's Secret is SOPS-encrypted, and the key decrypts them.
func TestIdleFleet(t *testing.T) {
	dir := t.TempDir()
	repoDir, keyFile, err := writeIdleFleet(context.Background(), IdleOptions{Clusters: 3, Profiles: 2, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := sops.LoadAgeKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(repoDir, "clusters", "*", "kubeconfig.yaml"))
	secrets, _ := filepath.Glob(filepath.Join(repoDir, "manifests", "*", "zz-secret.yaml"))
	if len(files) != 3 || len(secrets) != 2 {
		t.Fatalf("%d kubeconfigs, %d secrets: want 3 and 2", len(files), len(secrets))
	}
	for _, f := range append(files, secrets...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !sops.IsEncrypted(data) {
			t.Fatalf("%s is not encrypted", f)
		}
		plain, err := keys.Decrypt(context.Background(), f, data, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !strings.Contains(string(plain), "kind: Secret") {
			t.Errorf("%s decrypts to %q", f, plain)
		}
	}
}
