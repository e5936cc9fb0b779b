package verify_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/crypto/ssh"

	"github.com/regatta-dev/regatta/internal/testenv/signing"
	"github.com/regatta-dev/regatta/verify"
)

// TestSSHSignatures: commits signed with ssh-keygen through git are
// checked against an allowed_signers file: a listed key is accepted and
// named by its principals; an unlisted key, a key outside its
// valid-before at the commit's time and a key limited to another
// namespace are refused; a key whose valid-before passed after it signed
// (rotation) still verifies its old commits.
func TestSSHSignatures(t *testing.T) {
	alice := signing.NewSSHKey(t, "alice")
	bob := signing.NewSSHKey(t, "bob")
	old := signing.NewSSHKey(t, "old")
	filesOnly := signing.NewSSHKey(t, "files-only")
	g := newGitRepo(t)
	base := g.commit(alice.Signer(), "base", map[string]string{"a.yaml": "a: 0\n"})
	byBob := g.commit(bob.Signer(), "bob", map[string]string{"a.yaml": "a: 1\n"})
	byOld := g.commit(old.Signer(), "old", map[string]string{"a.yaml": "a: 2\n"})
	byFiles := g.commit(filesOnly.Signer(), "files", map[string]string{"a.yaml": "a: 3\n"})

	tomorrow := time.Now().Add(24 * time.Hour).UTC().Format("20060102")
	allowed := alice.AllowedSigner("alice@example.com", `namespaces="git"`) +
		old.AllowedSigner("old@example.com", `valid-before="20200101Z"`) +
		filesOnly.AllowedSigner("files@example.com", `namespaces="file"`)
	opts := verify.Options{Mode: verify.ModeHead, Keys: loadKeys(t, map[string][]byte{"allowed_signers": []byte(allowed)})}

	v := check(t, g, opts, base, "")
	wantAccepted(t, v)
	if !strings.HasPrefix(v.Key, "SHA256:") || v.Signer != "alice@example.com" {
		t.Fatalf("key %q signer %q", v.Key, v.Signer)
	}
	wantRefused(t, check(t, g, opts, byBob, base), byBob, verify.ReasonUnknownKey)
	v = check(t, g, opts, byOld, base)
	wantRefused(t, v, byOld, verify.ReasonExpiredKey)
	if !strings.Contains(v.Detail, "valid-before") {
		t.Fatalf("detail %q does not name valid-before", v.Detail)
	}
	wantRefused(t, check(t, g, opts, byFiles, base), byFiles, verify.ReasonUnknownKey)

	rotated := alice.AllowedSigner("alice@example.com", `valid-before="`+tomorrow+`"`)
	opts.Keys = loadKeys(t, map[string][]byte{"allowed_signers": []byte(rotated)})
	wantAccepted(t, check(t, g, opts, base, ""))
}

// TestAllowedSignersErrors: every bad line is reported with file and line.
func TestAllowedSignersErrors(t *testing.T) {
	k := signing.NewSSHKey(t, "k")
	file := "# comment\n\n" + k.AllowedSigner("a@example.com", `valid-before="2020"`) +
		"b@example.com\n" + k.AllowedSigner("c@example.com", "no-such-option") + k.AllowedSigner(`"d@example.com,e@example.com"`, "cert-authority")
	signers, err := verify.ParseAllowedSigners("allowed_signers", []byte(file))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"allowed_signers:3: option valid-before", "allowed_signers:4: want", "allowed_signers:5: option \"no-such-option\""} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if len(signers) != 1 || !signers[0].CertAuthority || len(signers[0].Principals) != 2 {
		t.Fatalf("good lines: %+v", signers)
	}
}

// TestExemptStatusCommits: regatta's own unsigned status commits on the
// followed branch (only status/ changed) are passed over in both modes;
// an unsigned commit that changes status/ and anything else is not.
func TestExemptStatusCommits(t *testing.T) {
	key := signing.NewSSHKey(t, "platform")
	keys := loadKeys(t, map[string][]byte{"allowed_signers": []byte(key.AllowedSigner("platform@example.com", ""))})
	g := newGitRepo(t)
	base := g.commit(key.Signer(), "base", map[string]string{"a.yaml": "a: 0\n"})
	g.commit(signing.Unsigned, "status", map[string]string{"status/fleet.yaml": "x: 1\n"})
	signed := g.commit(key.Signer(), "change", map[string]string{"a.yaml": "a: 1\n"})
	statusOnTop := g.commit(signing.Unsigned, "status again", map[string]string{"status/fleet.yaml": "x: 2\n"})
	for _, mode := range []verify.Mode{verify.ModeHead, verify.ModeEvery} {
		opts := verify.Options{Mode: mode, Keys: keys, Exempt: []string{"status"}}
		v := check(t, g, opts, statusOnTop, base)
		wantAccepted(t, v)
		if v.Commits == 0 || v.Key == "" {
			t.Fatalf("%s: %d commits checked, key %q", mode, v.Commits, v.Key)
		}
		wantRefused(t, check(t, g, verify.Options{Mode: mode, Keys: keys}, statusOnTop, base), statusOnTop, verify.ReasonUnsigned)
	}
	sneaky := g.commit(signing.Unsigned, "status and more", map[string]string{"status/fleet.yaml": "x: 3\n", "a.yaml": "a: 2\n"})
	opts := verify.Options{Mode: verify.ModeEvery, Keys: keys, Exempt: []string{"status"}}
	wantRefused(t, check(t, g, opts, sneaky, signed), sneaky, verify.ReasonUnsigned)
}

// TestSSHCertificateAuthority: a commit signed with a user certificate
// (made by ssh-keygen -s) is accepted under a cert-authority line whose
// principal patterns match the certificate's principal, within the
// certificate's validity; an expired certificate, or one for another
// principal, is refused.
func TestSSHCertificateAuthority(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen %v: %v\n%s", args, err, out)
		}
	}
	run("-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "ca"))
	run("-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "id"))
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pub"))
	if err != nil {
		t.Fatal(err)
	}
	certFor := func(principal, validity string) ssh.Signer {
		t.Helper()
		run("-q", "-s", filepath.Join(dir, "ca"), "-I", principal, "-n", principal, "-V", validity, filepath.Join(dir, "id.pub"))
		return certSigner(t, filepath.Join(dir, "id"))
	}
	keys := loadKeys(t, map[string][]byte{"allowed_signers": []byte(`*@example.com cert-authority ` + string(ca))})
	opts := verify.Options{Mode: verify.ModeHead, Keys: keys}
	g := newGitRepo(t)
	good := goGitCommit(t, g, certFor("alice@example.com", "-1d:+1d"), "by alice's certificate")
	v := check(t, g, opts, good, "")
	wantAccepted(t, v)
	if v.Signer != "alice@example.com" {
		t.Fatalf("signer %q", v.Signer)
	}
	expired := goGitCommit(t, g, certFor("alice@example.com", "20200101:20200102"), "expired certificate")
	wantRefused(t, check(t, g, opts, expired, ""), expired, verify.ReasonExpiredKey)
	other := goGitCommit(t, g, certFor("mallory@elsewhere.org", "-1d:+1d"), "another principal")
	wantRefused(t, check(t, g, opts, other, ""), other, verify.ReasonUnknownKey)
}

// certSigner loads a private key with the certificate beside it.
func certSigner(t *testing.T, key string) ssh.Signer {
	t.Helper()
	b, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.ParsePrivateKey(b)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := os.ReadFile(key + "-cert.pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(cb)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ssh.NewCertSigner(pub.(*ssh.Certificate), s)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// goGitCommit commits a change of a.yaml signed in-process (git cannot
// sign with a certificate without an agent).
func goGitCommit(t *testing.T, g *gitRepo, s ssh.Signer, msg string) string {
	t.Helper()
	r, err := git.PlainOpen(g.dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.dir, "a.yaml"), []byte("msg: "+msg+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add("a.yaml"); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit(msg, &git.CommitOptions{Signer: sshSigner{s},
		Author: &object.Signature{Name: "Dev", Email: "dev@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}
