// Package signing gives tests real signing keys and signed commits: gpg
// keys in a GNUPGHOME of their own, SSH keys from ssh-keygen, and git
// commits and tags signed with them by the git command.
package signing

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GPG is a gpg home of its own with the keys a test made.
type GPG struct {
	t    testing.TB
	Home string
}

// NewGPG makes an empty GNUPGHOME (a short path: gpg-agent's socket
// lives there) and stops its agent when the test ends.
func NewGPG(t testing.TB) *GPG {
	t.Helper()
	home, err := os.MkdirTemp("", "gpg")
	if err != nil {
		t.Fatal(err)
	}
	g := &GPG{t: t, Home: home}
	t.Cleanup(func() {
		cmd := exec.Command("gpgconf", "--kill", "gpg-agent")
		cmd.Env = g.env()
		_ = cmd.Run()
		os.RemoveAll(home)
	})
	return g
}

func (g *GPG) env() []string { return append(os.Environ(), "GNUPGHOME="+g.Home) }

// Run runs gpg in batch mode and returns its output.
func (g *GPG) Run(args ...string) string {
	g.t.Helper()
	cmd := exec.Command("gpg", append([]string{"--batch", "--yes", "--pinentry-mode", "loopback", "--passphrase", ""}, args...)...)
	cmd.Env = g.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("gpg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// GenKey makes a signing key without passphrase for uid ("Name
// <mail>"), expiring after expire ("never", "1d", ...), and returns its
// fingerprint.
func (g *GPG) GenKey(uid, expire string) string {
	g.t.Helper()
	g.Run("--quick-gen-key", uid, "ed25519", "sign", expire)
	for _, line := range strings.Split(g.Run("--with-colons", "--list-keys", uid), "\n") {
		if f := strings.Split(line, ":"); f[0] == "fpr" {
			return f[9]
		}
	}
	g.t.Fatalf("no fingerprint for %s", uid)
	return ""
}

// AddSigningSubkey adds an ed25519 signing subkey to a key; gpg signs
// with it from then on.
func (g *GPG) AddSigningSubkey(fpr string) {
	g.t.Helper()
	g.Run("--quick-add-key", fpr, "ed25519", "sign", "never")
}

// Export returns the armored public key.
func (g *GPG) Export(fpr string) []byte {
	g.t.Helper()
	return []byte(g.Run("--armor", "--export", fpr))
}

// Revoke imports the revocation certificate gpg made with the key.
func (g *GPG) Revoke(fpr string) {
	g.t.Helper()
	b, err := os.ReadFile(filepath.Join(g.Home, "openpgp-revocs.d", fpr+".rev"))
	if err != nil {
		g.t.Fatal(err)
	}
	cert := strings.Replace(string(b), ":-----BEGIN PGP PUBLIC KEY BLOCK-----", "-----BEGIN PGP PUBLIC KEY BLOCK-----", 1)
	p := filepath.Join(g.Home, "revoke.asc")
	if err := os.WriteFile(p, []byte(cert), 0o600); err != nil {
		g.t.Fatal(err)
	}
	g.Run("--import", p)
}

// Signer is how git signs: its -c options and environment.
type Signer struct {
	Config []string
	Env    []string
}

// Signer signs commits with a key of this home.
func (g *GPG) Signer(fpr string) Signer {
	return Signer{Config: []string{"gpg.format=openpgp", "user.signingkey=" + fpr}, Env: []string{"GNUPGHOME=" + g.Home}}
}

// SSHKey is an ed25519 key pair made by ssh-keygen.
type SSHKey struct {
	// Private is the private key's path; Public the public key line.
	Private string
	Public  string
}

// NewSSHKey makes a key pair without passphrase in a temporary folder.
func NewSSHKey(t testing.TB, comment string) SSHKey {
	t.Helper()
	p := filepath.Join(t.TempDir(), "id_ed25519")
	run(t, "", nil, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", p)
	pub, err := os.ReadFile(p + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return SSHKey{Private: p, Public: strings.TrimSpace(string(pub))}
}

// Signer signs commits with this key.
func (k SSHKey) Signer() Signer {
	return Signer{Config: []string{"gpg.format=ssh", "user.signingkey=" + k.Private}}
}

// AllowedSigner is the key's allowed_signers line for principals, with
// options ("" for none).
func (k SSHKey) AllowedSigner(principals, options string) string {
	line := principals + " "
	if options != "" {
		line += options + " "
	}
	return line + k.Public + "\n"
}

// Unsigned commits without a signature.
var Unsigned = Signer{Config: []string{"commit.gpgsign=false"}}

// Git runs git in dir, signing as s, with no user or system
// configuration; it returns the trimmed output.
func Git(t testing.TB, dir string, s Signer, args ...string) string {
	t.Helper()
	var full []string
	for _, c := range s.Config {
		full = append(full, "-c", c)
	}
	env := append([]string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Dev", "GIT_AUTHOR_EMAIL=dev@example.com",
		"GIT_COMMITTER_NAME=Dev", "GIT_COMMITTER_EMAIL=dev@example.com"}, s.Env...)
	return run(t, dir, env, "git", append(full, args...)...)
}

// Commit writes files in the working clone dir (empty content deletes),
// commits them signed by s (Unsigned: not signed) and returns the commit.
func Commit(t testing.TB, dir string, s Signer, msg string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if content == "" {
			os.RemoveAll(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Git(t, dir, s, "add", "-A")
	args := []string{"commit", "-q", "--allow-empty", "-m", msg}
	if len(s.Config) > 0 && s.Config[0] != Unsigned.Config[0] {
		args = append(args, "-S")
	}
	Git(t, dir, s, args...)
	return Git(t, dir, s, "rev-parse", "HEAD")
}

func run(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
