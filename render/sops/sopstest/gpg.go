package sopstest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// GnuPG is a temporary GnuPG home with test keys; its gpg-agent is
// stopped and the folder removed when the test ends.
type GnuPG struct {
	Home string
}

// NewGnuPG makes an empty GnuPG home. Its path is short (under os.TempDir)
// because gpg-agent's socket path must fit in 108 bytes.
func NewGnuPG(t testing.TB) *GnuPG {
	t.Helper()
	if _, err := exec.LookPath("gpg"); err != nil {
		t.Fatal("gpg not found: run `make test-env` (installs Debian's gnupg)")
	}
	home, err := os.MkdirTemp("", "gpg")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	g := &GnuPG{Home: home}
	t.Cleanup(func() {
		_ = exec.Command("gpgconf", "--homedir", home, "--kill", "all").Run()
		_ = os.RemoveAll(home)
	})
	return g
}

// Env is the environment that points gpg (and sops) at this home.
func (g *GnuPG) Env() []string { return []string{"GNUPGHOME=" + g.Home} }

// NewKey generates a key pair without passphrase, an RSA 2048 primary
// key (quick to make) with an encryption subkey as gpg makes them, and
// returns the primary key's fingerprint (what sops files name).
func (g *GnuPG) NewKey(t testing.TB, name string) string {
	t.Helper()
	uid := name + " <" + name + "@regatta.test>"
	g.gpg(t, "--passphrase", "", "--quick-gen-key", uid, "rsa2048", "cert,sign", "never")
	fp := g.fingerprint(t, name)
	g.gpg(t, "--passphrase", "", "--quick-add-key", fp, "rsa2048", "encr", "never")
	return fp
}

func (g *GnuPG) fingerprint(t testing.TB, name string) string {
	t.Helper()
	out := g.gpg(t, "--list-keys", "--with-colons", name+"@regatta.test")
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Split(sc.Text(), ":"); f[0] == "fpr" && len(f) > 9 {
			return f[9]
		}
	}
	t.Fatalf("no fingerprint for %s in:\n%s", name, out)
	return ""
}

// DeleteSecretKey removes the secret key of fingerprint, keeping its
// public key (the file can still be encrypted to it).
func (g *GnuPG) DeleteSecretKey(t testing.TB, fingerprint string) {
	t.Helper()
	g.gpg(t, "--yes", "--delete-secret-keys", fingerprint)
}

func (g *GnuPG) gpg(t testing.TB, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "gpg", append([]string{"--homedir", g.Home, "--batch", "--pinentry-mode", "loopback"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gpg %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}
