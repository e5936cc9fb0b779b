// Package refcli gives compatibility tests the reference CLIs they compare
// regatta with (jsonnet, ytt, oras, cosign), built from the Go module proxy
// once per version into a cache folder that later runs reuse:
// $REGATTA_REFCLI_DIR, or regatta-refcli under the user cache folder (the
// temporary folder without one).
package refcli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Build builds the CLI into dir as dir/<name>.
type Build func(dir, name string) error

// mu keeps two tests of one package from building the same CLI at once.
var mu sync.Mutex

// Path returns the CLI name at version: $env when set, else the binary
// build made in the cache folder, built on first use. It fails the test
// when the CLI cannot be built.
func Path(t testing.TB, env, name, version string, build Build) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	mu.Lock()
	defer mu.Unlock()
	root := os.Getenv("REGATTA_REFCLI_DIR")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil { // no $HOME: the temporary folder keeps them
			cache = os.TempDir()
		}
		root = filepath.Join(cache, "regatta-refcli")
	}
	dir := filepath.Join(root, name+"@"+version)
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("%s CLI: %v", name, err)
	}
	if err := build(dir, name); err != nil {
		t.Fatalf("building the %s CLI %s: %v", name, version, err)
	}
	return bin
}

// GoInstall builds with `go install pkg@version` (the package's main
// must be named after the CLI).
func GoInstall(pkg, version string) Build {
	return func(dir, _ string) error {
		cmd := exec.Command("go", "install", pkg+"@"+version)
		cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go install %s@%s: %w\n%s", pkg, version, err, out)
		}
		return nil
	}
}

// ModuleVersion is the version of module in the go.mod of the folder the
// test runs in.
func ModuleVersion(t testing.TB, module string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", module).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -m %s: %s", module, ee.Stderr)
		}
		t.Fatalf("go list -m %s: %v", module, err)
	}
	return strings.TrimSpace(string(out))
}
