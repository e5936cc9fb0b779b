package sopstest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// binDirEnv names the folder of the test binaries (as internal/testenv).
const binDirEnv = "REGATTA_BIN_DIR"

// CLI returns the path of the sops CLI: $REGATTA_BIN_DIR/sops, else
// <module root>/bin/sops, else sops on PATH. A test without it fails: run
// `make test-env`.
func CLI(t testing.TB) string {
	t.Helper()
	var looked []string
	if dir := os.Getenv(binDirEnv); dir != "" {
		looked = append(looked, filepath.Join(dir, "sops"))
	}
	if root := moduleRoot(); root != "" {
		looked = append(looked, filepath.Join(root, "bin", "sops"))
	}
	for _, p := range looked {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath("sops"); err == nil {
		return p
	}
	t.Fatalf("the sops CLI was not found (looked in %s and PATH): run `make test-env` or hack/setup-test-env.sh", strings.Join(looked, ", "))
	return ""
}

// moduleRoot is the folder above the working directory holding a go.mod
// of the regatta module, or "".
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(data, []byte("module github.com/regatta-dev/regatta\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Sops runs the sops CLI with args in dir and the given extra environment
// (KEY=value; the test's own environment is not passed on beyond PATH and
// HOME), and returns its standard output. It fails the test on an error.
func Sops(t testing.TB, dir string, env []string, stdin []byte, args ...string) []byte {
	t.Helper()
	out, err := sopsRun(t, dir, env, stdin, args...)
	if err != nil {
		t.Fatalf("sops %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// SopsErr runs the sops CLI like Sops and returns its error (with
// standard error) instead of failing.
func SopsErr(t testing.TB, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	t.Helper()
	return sopsRun(t, dir, env, stdin, args...)
}

func sopsRun(t testing.TB, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(t.Context(), CLI(t), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"SOPS_DISABLE_VERSION_CHECK=1",
		// The CLI's local key service asks the AWS SDK for credentials
		// for KMS keys the test key service serves: no instance
		// metadata probes.
		"AWS_EC2_METADATA_DISABLED=true",
	}, env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, &cliError{err: err, stderr: stderr.String()}
	}
	return out, nil
}

type cliError struct {
	err    error
	stderr string
}

func (e *cliError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.stderr) }

func (e *cliError) Unwrap() error { return e.err }
