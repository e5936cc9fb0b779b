package verify_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/internal/testenv/signing"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/verify"
)

// sshSigner signs git objects in-process as ssh-keygen -Y sign -n git
// does (go-git's Signer), to build long histories fast.
type sshSigner struct{ s ssh.Signer }

func (g sshSigner) Sign(m io.Reader) ([]byte, error) {
	sig, err := sshsig.Sign(m, g.s, sshsig.HashSHA512, "git")
	if err != nil {
		return nil, err
	}
	return sshsig.Armor(sig), nil
}

// signedHistory makes a repository of n signed commits, each changing
// one file of a tenant folder, and returns it, its commits (oldest
// first) and the allowed_signers line of the key.
func signedHistory(b *testing.B, n int) (string, []string, string) {
	b.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		b.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		b.Fatal(err)
	}
	var commits []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("tenants/team-a/app-%d.yaml", i%50)
		if err := os.MkdirAll(filepath.Join(dir, "tenants/team-a"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("v: %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
		if _, err := wt.Add(name); err != nil {
			b.Fatal(err)
		}
		when := time.Unix(1700000000+int64(i), 0)
		h, err := wt.Commit(fmt.Sprintf("change %d", i), &git.CommitOptions{Signer: sshSigner{signer},
			Author: &object.Signature{Name: "Dev", Email: "dev@example.com", When: when}})
		if err != nil {
			b.Fatal(err)
		}
		commits = append(commits, h.String())
	}
	line := "team-a@example.com " + string(ssh.MarshalAuthorizedKey(signer.PublicKey()))
	return dir, commits, line
}

// BenchmarkVerify1000Commits: every-commit mode with a signers policy
// over the 1,000 commits since the last verified revision.
func BenchmarkVerify1000Commits(b *testing.B) {
	dir, commits, line := signedHistory(b, 1001)
	policy, err := verify.ParsePolicy("policy.yaml", []byte(policyYAML))
	if err != nil {
		b.Fatal(err)
	}
	keys, err := verify.LoadKeys(keysDirB(b, line))
	if err != nil {
		b.Fatal(err)
	}
	// Read as the daemon reads: a clone in memory with its history.
	src, err := repo.NewSource(repo.Options{URL: dir, Branch: "master", FullHistory: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := src.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	v := verify.New(src, verify.Options{Mode: verify.ModeEvery, Keys: keys, Policy: policy})
	b.ResetTimer()
	for b.Loop() {
		if got := v.Check(ctx, commits[1000], commits[0]); !got.Accepted || got.Commits != 1000 {
			b.Fatalf("%d commits checked: %s", got.Commits, got.Error())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "µs/commit")
}

// BenchmarkSteadyState: one new signed commit per revision, on top of a
// history of 1,000, over a real Git server on HTTP: the cost of its
// check (every-commit mode, policy) beside the cost of its fetch.
func BenchmarkSteadyState(b *testing.B) {
	log.SetOutput(io.Discard) // the Git server logs every request
	b.Cleanup(func() { log.SetOutput(os.Stderr) })
	key := signing.NewSSHKey(b, "team-a")
	fleet := gitfleet.New(b)
	dir, _, _ := signedHistory(b, 1000)
	gitfleet.Git(b, dir, "push", "-q", fleet.Bare, "HEAD:main")
	gitfleet.Git(b, fleet.Work, "pull", "-q", "origin", "main")
	policy, err := verify.ParsePolicy("policy.yaml", []byte(policyYAML))
	if err != nil {
		b.Fatal(err)
	}
	keys, err := verify.LoadKeys(keysDirB(b, key.AllowedSigner("team-a@example.com", "")))
	if err != nil {
		b.Fatal(err)
	}
	src, err := repo.NewSource(repo.Options{URL: fleet.URL, FullHistory: true,
		Auth: repo.Auth{Username: gitfleet.User, Password: gitfleet.Password}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	last, _, err := src.Sync(ctx)
	if err != nil {
		b.Fatal(err)
	}
	v := verify.New(src, verify.Options{Mode: verify.ModeEvery, Keys: keys, Policy: policy})
	var fetch, check time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		signing.Commit(b, fleet.Work, key.Signer(), "change", map[string]string{"tenants/team-a/app.yaml": fmt.Sprintf("v: %d\n", i)})
		gitfleet.Git(b, fleet.Work, "push", "-q", "origin", "HEAD:main")
		b.StartTimer()
		start := time.Now()
		rev, _, err := src.Sync(ctx)
		if err != nil {
			b.Fatal(err)
		}
		fetch += time.Since(start)
		start = time.Now()
		if got := v.Check(ctx, rev, last); !got.Accepted || got.Commits != 1 {
			b.Fatalf("%d commits: %s", got.Commits, got.Error())
		}
		check += time.Since(start)
		last = rev
	}
	b.ReportMetric(float64(fetch.Microseconds())/float64(b.N), "fetch-µs/rev")
	b.ReportMetric(float64(check.Microseconds())/float64(b.N), "verify-µs/rev")
}

func keysDirB(b *testing.B, allowed string) string {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "allowed_signers"), []byte(allowed), 0o600); err != nil {
		b.Fatal(err)
	}
	return dir
}
