package reconciler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/reconciler/status/history"
	"github.com/regatta-dev/regatta/repo"
)

// TestRestartAcrossFold: a daemon whose status history is folded after
// every status commit (--status-history-keep 1) leaves a status branch of
// one folded commit; a daemon started on it restores what the first one
// knew: the OneTime pair still reports the revision the cluster holds,
// not the newer one it never applied, and no record is lost.
func TestRestartAcrossFold(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	files := baseFleet(t, "fold")
	// A profile of its own: the clusters are shared by the package's
	// tests, and a OneTime pair's inventory outlives a test.
	once := fmt.Sprintf("fold-once-%d", time.Now().UnixNano()%1e9)
	files["profiles/"+once+".yaml"] = profileYAML(once, "env: prod", "  syncMode: OneTime\n  addons:\n  - name: cm\n    manifests: {path: once}\n")
	files["once/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + once + ", namespace: default}\ndata: {v: \"1\"}\n"
	rev1 := f.Commit("fleet", files)
	first := newHarness(t, f, func(o *DaemonOptions) { o.StatusHistory = history.New(o.Source, 1, nil) })
	if res, err := first.d.RunOnce(ctx); err != nil {
		t.Fatalf("first rollout: %v %+v", err, res.Snapshot)
	}
	rev2 := f.Commit("once v2 (OneTime: not applied)", map[string]string{"once/cm.yaml": strings.Replace(files["once/cm.yaml"], `"1"`, `"2"`, 1)})
	if _, err := first.d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	first.d.Close()
	if n := f.Commits(repo.DefaultStatusBranch); n != 1 {
		t.Fatalf("the status branch holds %d commits, want 1 after folds", n)
	}
	if msg := gitfleet.Git(t, f.Bare, "log", "-1", "--format=%B", repo.DefaultStatusBranch); !strings.Contains(msg, repo.TrailerFoldedFrom) {
		t.Fatalf("the status branch was never folded:\n%s", msg)
	}

	restarted := newHarness(t, f, nil)
	res, err := restarted.d.RunOnce(ctx)
	if err != nil {
		t.Fatalf("restart: %v %+v", err, res.Snapshot)
	}
	if p := pairs(res, "c37")[once]; p.Revision != rev1 || p.Revision == rev2 {
		t.Errorf("after the fold the OneTime pair reports revision %s; the cluster holds %s's render", status.ShortRevision(p.Revision), status.ShortRevision(rev1))
	}
	if p := pairs(res, "c37")["app"]; p.State != status.StateApplied {
		t.Errorf("restored pair: %+v", p)
	}
}
