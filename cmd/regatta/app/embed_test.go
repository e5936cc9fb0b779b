package app

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/reconciler"
)

// TestNewDaemon builds the daemon of `regatta run` flags in this process,
// as the benchmark does, and sees its pass through OnPass.
func TestNewDaemon(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"profiles/hello.yaml":  "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: hello}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: cm\n    manifests: {path: addons/hello}\n",
		"addons/hello/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello, namespace: default}\n",
	})
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "fleet")
	head, err := gitOutput(dir, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	head = strings.TrimSpace(head)
	var passes []reconciler.PassResult
	d, err := NewDaemon(context.Background(), []string{"--repo", dir, "--helm-cache-dir", t.TempDir()},
		EmbedOptions{Log: io.Discard, OnPass: func(r reconciler.PassResult) { passes = append(passes, r) }})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if res, err := d.RunOnce(context.Background()); err != nil {
		t.Fatalf("%v: %+v", err, res.Snapshot.Fleet)
	}
	if len(passes) != 1 || passes[0].Snapshot.Fleet.SourceRevision != head {
		t.Fatalf("passes %+v, want one of %s", passes, head)
	}
	for _, args := range [][]string{{"--interval", "1h"}, {"--repo", dir, "--no-such-flag"}, {"--repo", dir, "--log-level", "loud"}} {
		if _, err := NewDaemon(context.Background(), args, EmbedOptions{Log: io.Discard}); err == nil {
			t.Errorf("NewDaemon(%q): no error", args)
		}
	}
}
