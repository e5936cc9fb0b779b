package verify_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv/signing"
	"github.com/regatta-dev/regatta/verify"
)

// TestOpenPGPChain: a chain signed by a trusted key is accepted in both
// modes; an unsigned commit on top, or under a signed one in every-commit
// mode, is refused at that commit; the verdict names the key.
func TestOpenPGPChain(t *testing.T) {
	gpg := signing.NewGPG(t)
	fpr := gpg.GenKey("Platform <platform@example.com>", "never")
	keys := loadKeys(t, map[string][]byte{"platform.asc": gpg.Export(fpr)})
	g := newGitRepo(t)
	s := gpg.Signer(fpr)
	c1 := g.commit(s, "one", map[string]string{"a.yaml": "a: 1\n"})
	c2 := g.commit(s, "two", map[string]string{"a.yaml": "a: 2\n"})
	for _, mode := range []verify.Mode{verify.ModeHead, verify.ModeEvery} {
		v := check(t, g, verify.Options{Mode: mode, Keys: keys}, c2, c1)
		wantAccepted(t, v)
		if v.Key != fpr || v.Signer != "Platform <platform@example.com>" {
			t.Fatalf("%s: key %q signer %q, want %s", mode, v.Key, v.Signer, fpr)
		}
	}
	c3 := g.commit(signing.Unsigned, "unsigned", map[string]string{"a.yaml": "a: 3\n"})
	wantRefused(t, check(t, g, verify.Options{Mode: verify.ModeHead, Keys: keys}, c3, c2), c3, verify.ReasonUnsigned)

	c4 := g.commit(s, "signed on top", map[string]string{"a.yaml": "a: 4\n"})
	wantAccepted(t, check(t, g, verify.Options{Mode: verify.ModeHead, Keys: keys}, c4, c2))
	v := check(t, g, verify.Options{Mode: verify.ModeEvery, Keys: keys}, c4, c2)
	wantRefused(t, v, c3, verify.ReasonUnsigned)
	if !strings.Contains(v.Error(), "Unsigned") {
		t.Fatalf("message %q", v.Error())
	}
}

// TestOpenPGPRefusals: an unknown key, an expired key, a revoked key and
// a commit rewritten after signing are refused with their reason.
func TestOpenPGPRefusals(t *testing.T) {
	gpg := signing.NewGPG(t)
	trusted := gpg.GenKey("Platform <platform@example.com>", "never")
	stranger := gpg.GenKey("Stranger <stranger@example.com>", "never")
	short := gpg.GenKey("Short <short@example.com>", "1d")
	revoked := gpg.GenKey("Revoked <revoked@example.com>", "never")
	g := newGitRepo(t)
	base := g.commit(gpg.Signer(trusted), "base", map[string]string{"a.yaml": "a: 0\n"})
	byStranger := g.commit(gpg.Signer(stranger), "stranger", map[string]string{"a.yaml": "a: 1\n"})
	byShort := g.commit(gpg.Signer(short), "short-lived", map[string]string{"a.yaml": "a: 2\n"})
	byRevoked := g.commit(gpg.Signer(revoked), "revoked", map[string]string{"a.yaml": "a: 3\n"})
	gpg.Revoke(revoked)
	keys := loadKeys(t, map[string][]byte{
		"platform.asc": gpg.Export(trusted), "short.asc": gpg.Export(short), "revoked.asc": gpg.Export(revoked)})
	opts := verify.Options{Mode: verify.ModeHead, Keys: keys}

	v := check(t, g, opts, byStranger, base)
	wantRefused(t, v, byStranger, verify.ReasonUnknownKey)
	if v.Key != stranger {
		t.Fatalf("unknown key named %q, want %s", v.Key, stranger)
	}
	wantAccepted(t, check(t, g, opts, byShort, base)) // not expired yet
	later := opts
	later.Now = in(48 * time.Hour)
	v = check(t, g, later, byShort, base)
	wantRefused(t, v, byShort, verify.ReasonExpiredKey)
	if v.Key != short {
		t.Fatalf("expired key named %q, want %s", v.Key, short)
	}
	v = check(t, g, opts, byRevoked, base)
	wantRefused(t, v, byRevoked, verify.ReasonRevokedKey)

	tampered := tamper(t, g, base, "base", "base, rewritten")
	wantRefused(t, check(t, g, opts, tampered, ""), tampered, verify.ReasonBadSignature)
}

// tamper rewrites a signed commit's message, keeping its signature, and
// stores the new object.
func tamper(t *testing.T, g *gitRepo, commit, old, replacement string) string {
	t.Helper()
	raw := g.git(signing.Unsigned, "cat-file", "commit", commit) + "\n"
	cmd := exec.Command("git", "hash-object", "-t", "commit", "-w", "--stdin")
	cmd.Dir = g.dir
	cmd.Stdin = strings.NewReader(strings.Replace(raw, "\n"+old+"\n", "\n"+replacement+"\n", 1))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	sha := strings.TrimSpace(string(out))
	if sha == commit {
		t.Fatal("tampering changed nothing")
	}
	g.git(signing.Unsigned, "update-ref", "refs/heads/tampered", sha)
	return sha
}

// TestOpenPGPSubkeyAndRotation: a signature by a signing subkey counts as
// its primary key; a key added to the trusted keys and the old one
// retired: the revision in force (base) is not checked again in
// every-commit mode, new commits by the new key are accepted, new ones by
// the old key refused.
func TestOpenPGPSubkeyAndRotation(t *testing.T) {
	gpg := signing.NewGPG(t)
	old := gpg.GenKey("Old <old@example.com>", "never")
	next := gpg.GenKey("Next <next@example.com>", "never")
	gpg.AddSigningSubkey(next)
	g := newGitRepo(t)
	inForce := g.commit(gpg.Signer(old), "by old", map[string]string{"a.yaml": "a: 1\n"})
	byNext := g.commit(gpg.Signer(next), "by next's subkey", map[string]string{"a.yaml": "a: 2\n"})
	rotated := loadKeys(t, map[string][]byte{"next.asc": gpg.Export(next)})
	opts := verify.Options{Mode: verify.ModeEvery, Keys: rotated}
	v := check(t, g, opts, byNext, inForce)
	wantAccepted(t, v)
	if v.Key != next {
		t.Fatalf("subkey signature named %q, want primary %s", v.Key, next)
	}
	byOld := g.commit(gpg.Signer(old), "old key after rotation", map[string]string{"a.yaml": "a: 3\n"})
	wantRefused(t, check(t, g, opts, byOld, byNext), byOld, verify.ReasonUnknownKey)
}
