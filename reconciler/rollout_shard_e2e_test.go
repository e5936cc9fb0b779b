package reconciler

import (
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// ownsAll is a replica that owns every cluster: a narrow fake of
// reconciler/shard's membership, which has tests of its own.
type ownsAll struct{}

func (ownsAll) Owns(string) bool { return true }
func (ownsAll) OwnsFleet() bool  { return true }
func (ownsAll) Identity() string { return "replica-0" }

// TestShardedRolloutDoesNotAdvance: with replicas sharing the fleet a
// replica sees only its own clusters, so it could not keep a rollout's
// maxUpdate, stages or halt: a rolling profile is not applied and its
// record says why, while a profile without rollout is applied.
func TestShardedRolloutDoesNotAdvance(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\ndata: {v: \"1\"}\n"
	}
	addon := func(path string) string {
		return "  addons:\n  - name: cm\n    manifests: {path: " + path + "}\n"
	}
	files := map[string]string{
		"profiles/shard-plain.yaml":   profileYAML("shard-plain", "env: prod", addon("shard-plain")),
		"shard-plain/cm.yaml":         cm("shard-plain"),
		"profiles/shard-rolling.yaml": profileYAML("shard-rolling", "env: prod", "  rollout: {maxUpdate: 1}\n"+addon("shard-rolling")),
		"shard-rolling/cm.yaml":       cm("shard-rolling"),
	}
	f := newFleetRepo(t)
	for k, v := range clusterFiles(t, "c37", "env: prod") {
		files[k] = v
	}
	f.Commit("fleet", files)
	h := newHarness(t, f, func(o *DaemonOptions) {
		o.StatusBranch = ""
		o.Watch.Interval, o.Watch.DisableFSNotify = time.Hour, true
		o.Ownership = ownsAll{}
	})
	t.Cleanup(h.d.Close)
	runDaemon(t, h)
	testenv.WaitFor(t, 30*time.Second, "shard-plain applied and shard-rolling held", func() bool {
		return h.pairRecord("c37", "shard-plain").State == status.StateApplied &&
			h.pairRecord("c37", "shard-rolling").Message == errShardedRollout
	})
	if rec := h.pairRecord("c37", "shard-rolling"); rec.State != status.StateWaitingForRollout {
		t.Errorf("shard-rolling: state %s, want %s", rec.State, status.StateWaitingForRollout)
	}
	if configMap(t, "c37", "default", "shard-rolling") != nil {
		t.Error("a replica applied a rolling profile it cannot coordinate with the other replicas")
	}
}
