package reconciler

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/internal/testenv/signing"
	"github.com/regatta-dev/regatta/verify"
)

// TestShardedReplicasVerifyAlike: two replicas of a sharded fleet, each
// owning one cluster, verify every commit with the same keys. A signed
// revision reaches both clusters, each through its owner; an unsigned
// commit on top is kept out by both (neither cluster changes), and the
// fleet's owner names the refusal in status/fleet.yaml.
func TestShardedReplicasVerifyAlike(t *testing.T) {
	ctx := context.Background()
	key := signing.NewSSHKey(t, "platform")
	keys := trustedKeys(t, key.AllowedSigner("platform@example.com", ""))
	f := newFleetRepo(t)
	cm := func(v string) map[string]string {
		return map[string]string{"shardsig/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shardsig, namespace: default}\ndata: {v: " + v + "}\n"}
	}
	files := cm("v1")
	files["profiles/shardsig.yaml"] = profileYAML("shardsig", "env: prod", "  addons:\n  - name: cm\n    manifests: {path: shardsig}\n")
	for _, c := range []string{"c35", "c37"} {
		for k, v := range clusterFiles(t, c, "env: prod") {
			files[k] = v
		}
	}
	gitfleet.Git(t, f.Work, "commit", "-q", "--allow-empty", "-m", "root")
	gitfleet.Git(t, f.Work, "push", "-q", "origin", "HEAD:main")
	push := func(s signing.Signer, msg string, files map[string]string) string {
		sha := signing.Commit(t, f.Work, s, msg, files)
		gitfleet.Git(t, f.Work, "push", "-q", "origin", "HEAD:main")
		return sha
	}
	v1 := push(key.Signer(), "v1", files)
	var hs []*harness
	for i, c := range []string{"c35", "c37"} {
		own := staticOwnership{id: "replica-" + c, clusters: map[string]bool{c: true}, fleet: i == 0}
		hs = append(hs, newHarness(t, f, func(o *DaemonOptions) {
			o.Ownership = own
			o.Verify = verify.New(o.Source, verify.Options{Mode: verify.ModeEvery, Keys: keys})
		}))
	}
	for _, h := range hs {
		// Other tests' profiles on the shared clusters may leave the fleet
		// unconverged (ErrUnconverged): the revision in force is the check.
		if res, err := h.d.RunOnce(ctx); (err != nil && !errors.Is(err, ErrUnconverged)) || res.Snapshot.Fleet.AppliedRevision != v1 {
			t.Fatalf("v1: %v, in force %s, verification %+v", err, res.Snapshot.Fleet.AppliedRevision, res.Snapshot.Fleet.Verification)
		}
	}
	for _, c := range []string{"c35", "c37"} {
		if got := configMap(t, c, "default", "shardsig")["v"]; got != "v1" {
			t.Fatalf("%s: v = %q, want v1", c, got)
		}
	}
	unsigned := push(signing.Unsigned, "unsigned v2", cm("v2"))
	for i, h := range hs {
		res, _ := h.d.RunOnce(ctx)
		v := res.Snapshot.Fleet.Verification
		if res.Snapshot.Fleet.AppliedRevision != v1 || v == nil || v.Commit != unsigned || v.Reason != string(verify.ReasonUnsigned) {
			t.Fatalf("replica %d at the unsigned commit: in force %s, verification %+v", i, res.Snapshot.Fleet.AppliedRevision, v)
		}
	}
	for _, c := range []string{"c35", "c37"} {
		if got := configMap(t, c, "default", "shardsig")["v"]; got != "v1" {
			t.Fatalf("%s: a refused revision applied: v = %q", c, got)
		}
	}
	if y := f.Show("regatta/status", "status/fleet.yaml"); !strings.Contains(y, "reason: Unsigned") || !strings.Contains(y, "commit: "+unsigned) {
		t.Fatalf("the fleet's owner does not name the refusal:\n%s", y)
	}
}
