package reconciler

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/internal/testenv/signing"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/verify"
)

// TestSignedFleetWithStatusOnFollowedBranch: with --verify-commits=every
// and status committed to the followed branch, regatta's own unsigned
// status commits are passed over, a signed change on top of them comes
// in, and an unsigned one is kept out with the revision in force applied,
// the verdict in status/fleet.yaml and on the dashboard.
func TestSignedFleetWithStatusOnFollowedBranch(t *testing.T) {
	ctx := context.Background()
	key := signing.NewSSHKey(t, "platform")
	keys := trustedKeys(t, key.AllowedSigner("platform@example.com", ""))
	f := newFleetRepo(t)
	cm := func(v string) map[string]string {
		return map[string]string{"signed/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: signed, namespace: default}\ndata: {v: " + v + "}\n"}
	}
	files := cm("v1")
	files["profiles/signed.yaml"] = profileYAML("signed", "env: prod", "  addons:\n  - name: cm\n    manifests: {path: signed}\n")
	for k, v := range clusterFiles(t, "c37", "env: prod") {
		files[k] = v
	}
	commit := func(s signing.Signer, msg string, files map[string]string) string {
		gitfleet.Git(t, f.Work, "pull", "-q", "origin", "main")
		sha := signing.Commit(t, f.Work, s, msg, files)
		gitfleet.Git(t, f.Work, "push", "-q", "origin", "HEAD:main")
		return sha
	}
	gitfleet.Git(t, f.Work, "commit", "-q", "--allow-empty", "-m", "root") // so that pull finds main
	gitfleet.Git(t, f.Work, "push", "-q", "origin", "HEAD:main")
	v1 := commit(key.Signer(), "v1", files)
	h := newHarness(t, f, func(o *DaemonOptions) {
		o.StatusBranch = "main"
		o.Verify = verify.New(o.Source, verify.Options{Mode: verify.ModeEvery, Keys: keys, Exempt: []string{status.Dir}})
	})
	res, err := h.d.RunOnce(ctx)
	if err != nil {
		t.Fatalf("v1: %v", err)
	}
	if v := res.Snapshot.Fleet.Verification; v == nil || !v.Accepted || v.Commit != v1 || v.Signer != "platform@example.com" {
		t.Fatalf("v1 verification: %+v", v)
	}

	v2 := commit(key.Signer(), "v2 over regatta's status commit", cm("v2"))
	if res, err = h.d.RunOnce(ctx); err != nil || res.Snapshot.Fleet.AppliedRevision != v2 {
		t.Fatalf("v2 over the status commit: %v, in force %s, %+v", err, res.Snapshot.Fleet.AppliedRevision, res.Snapshot.Fleet.Verification)
	}
	if got := configMap(t, "c37", "default", "signed")["v"]; got != "v2" {
		t.Fatalf("v = %q, want v2", got)
	}

	unsigned := commit(signing.Unsigned, "unsigned v3", cm("v3"))
	res, _ = h.d.RunOnce(ctx)
	fl := res.Snapshot.Fleet
	if fl.AppliedRevision != v2 || fl.Verification == nil || fl.Verification.Reason != string(verify.ReasonUnsigned) || fl.Verification.Commit != unsigned {
		t.Fatalf("unsigned v3: in force %s, verification %+v", fl.AppliedRevision, fl.Verification)
	}
	if got := configMap(t, "c37", "default", "signed")["v"]; got != "v2" {
		t.Fatalf("a refused revision applied: v = %q", got)
	}
	if dash := f.Show("main", "status/README.md"); !strings.Contains(dash, "Signature check (every) refused commit `"+status.ShortRevision(unsigned)+"`**: Unsigned") {
		t.Fatalf("the dashboard does not name the refusal:\n%s", dash)
	}
	if y := f.Show("main", "status/fleet.yaml"); !strings.Contains(y, "reason: Unsigned") || !strings.Contains(y, "commit: "+unsigned) {
		t.Fatalf("fleet.yaml:\n%s", y)
	}
}

// TestRestartWithRetiredSignerKeepsOut: a daemon restarted with keys
// under which the revision in force no longer verifies (its signer
// retired too early) cannot check the commits since it, so it lets none
// in, even one signed by a trusted key, deletes nothing and keeps naming
// that revision in force (so does a second restart); trusting the old
// signer again lets the new revision in.
func TestRestartWithRetiredSignerKeepsOut(t *testing.T) {
	ctx := context.Background()
	old, next := signing.NewSSHKey(t, "old"), signing.NewSSHKey(t, "next")
	both := trustedKeys(t, old.AllowedSigner("old@example.com", "")+next.AllowedSigner("next@example.com", ""))
	nextOnly := trustedKeys(t, next.AllowedSigner("next@example.com", ""))
	f := newFleetRepo(t)
	files := map[string]string{
		"profiles/retired.yaml": profileYAML("retired", "env: prod", "  addons:\n  - name: cm\n    manifests: {path: retired}\n"),
		"retired/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: retired, namespace: default}\ndata: {v: v1}\n",
	}
	for k, v := range clusterFiles(t, "c37", "env: prod") {
		files[k] = v
	}
	push := func(s signing.Signer, msg string, files map[string]string) string {
		sha := signing.Commit(t, f.Work, s, msg, files)
		gitfleet.Git(t, f.Work, "push", "-q", "origin", "HEAD:main")
		return sha
	}
	daemon := func(keys *verify.Keys) *harness {
		return newHarness(t, f, func(o *DaemonOptions) {
			o.Verify = verify.New(o.Source, verify.Options{Mode: verify.ModeEvery, Keys: keys})
		})
	}
	v1 := push(old.Signer(), "v1 by the old key", files)
	first := daemon(both)
	if _, err := first.d.RunOnce(ctx); err != nil {
		t.Fatalf("v1: %v", err)
	}
	first.d.Close()

	push(next.Signer(), "v2 by the next key", map[string]string{"retired/cm.yaml": strings.Replace(files["retired/cm.yaml"], "{v: v1}", "{v: v2}", 1)})
	res, _ := daemon(nextOnly).d.RunOnce(ctx)
	fl := res.Snapshot.Fleet
	if fl.AppliedRevision != v1 || fl.Verification == nil || fl.Verification.Reason != string(verify.ReasonUnknownKey) ||
		fl.Verification.Commit != v1 || !strings.Contains(fl.Verification.Message, "the revision in force before the restart") {
		t.Fatalf("restart without the old signer: in force %q, verification %+v", fl.AppliedRevision, fl.Verification)
	}
	if got := configMap(t, "c37", "default", "retired")["v"]; got != "v1" {
		t.Fatalf("v = %q, want v1 left in place", got)
	}
	if res, _ = daemon(nextOnly).d.RunOnce(ctx); res.Snapshot.Fleet.AppliedRevision != v1 || res.Snapshot.Fleet.Verification.Accepted {
		t.Fatalf("a second restart without the old signer: in force %q, verification %+v", res.Snapshot.Fleet.AppliedRevision, res.Snapshot.Fleet.Verification)
	}
	res, err := daemon(both).d.RunOnce(ctx)
	if err != nil || res.Snapshot.Fleet.Verification == nil || !res.Snapshot.Fleet.Verification.Accepted {
		t.Fatalf("the old signer trusted again: %v %+v", err, res.Snapshot.Fleet.Verification)
	}
	if got := configMap(t, "c37", "default", "retired")["v"]; got != "v2" {
		t.Fatalf("v = %q, want v2", got)
	}
}

// trustedKeys are the keys of an allowed_signers file with these lines.
func trustedKeys(t *testing.T, allowedSigners string) *verify.Keys {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "allowed_signers"), []byte(allowedSigners), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := verify.LoadKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
