package reconciler

import (
	"context"
	"fmt"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"strings"
	"testing"
)

// TestStatusPushesToAWorkingRepositoryAcrossRestarts follows a non-bare
// local repository (the layout `make demo` uses), committing in it and
// restarting the daemon (fresh memory clone) between passes: every pass's
// status commit lands on the status branch of the working repository.
func TestStatusPushesToAWorkingRepositoryAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	gitfleet.Git(t, work, "init", "-q", "-b", "main")
	files := clusterFiles(t, "c37", "env: prod")
	files["profiles/local.yaml"] = "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: local}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: cm\n    manifests: {path: local}\n"
	var prev string
	for round := range 4 {
		files["local/cm.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: local-repo, namespace: default}\ndata: {round: \"%d\"}\n", round)
		for name, content := range files {
			if err := writeFile(work, name, content); err != nil {
				t.Fatal(err)
			}
		}
		gitfleet.Git(t, work, "add", "-A")
		gitfleet.Git(t, work, "commit", "-q", "-m", fmt.Sprintf("round %d", round))
		rev := gitfleet.Git(t, work, "rev-parse", "HEAD")
		h := newHarness(t, &fleetRepo{gitfleet.At(t, work)}, nil)
		if _, err := h.d.RunOnce(ctx); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		head := gitfleet.Git(t, work, "rev-parse", "regatta/status")
		msg := gitfleet.Git(t, work, "log", "-1", "--format=%B", "regatta/status")
		if head == prev || !strings.Contains(msg, "Regatta-Source-Revision: "+rev) {
			t.Fatalf("round %d: status branch at %s (before %s), message:\n%s", round, head, prev, msg)
		}
		if got := configMap(t, "c37", "default", "local-repo")["round"]; got != fmt.Sprint(round) {
			t.Fatalf("round %d: ConfigMap round %q", round, got)
		}
		prev = head
	}
}
