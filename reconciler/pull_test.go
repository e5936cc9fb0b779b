package reconciler

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/spec"
)

// A cross-cluster event pair that involves a pulled cluster, as source or
// destination, fails at run time too (a classifier label can make a pulled
// cluster match after validation); a local event pair does not.
func TestPulledEventsRefused(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	fsys := fstest.MapFS{
		"clusters/edge/cluster.yaml": file("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: edge}\nspec: {mode: pull}\n"),
		"clusters/hub/cluster.yaml":  file("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: hub}\nspec: {}\n"),
		"events/svc.yaml":            file("apiVersion: regatta.dev/v1alpha1\nkind: EventSource\nmetadata: {name: svc}\nspec:\n  resourceSelectors: [{version: v1, kind: Service}]\n"),
		"addons/a/cm.yaml":           file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 'a-{{ .Event.Name }}', namespace: default}\n"),
		"profiles/cross.yaml": file(`apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: cross}
spec:
  clusterSelector: {matchLabels: {tier: edge}}
  eventTrigger: {eventSourceName: svc, destinationClusterSelector: {matchLabels: {role: hub}}}
  addons: [{name: a, template: true, manifests: {path: addons/a}}]
`),
		"profiles/local.yaml": file(`apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: local}
spec:
  clusterSelector: {matchLabels: {tier: edge}}
  eventTrigger: {eventSourceName: svc}
  addons: [{name: a, template: true, manifests: {path: addons/a}}]
`),
	}
	repo, diags := spec.Load(fsys)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	edge, hub := repo.Cluster("edge"), repo.Cluster("hub")
	err := pulledEvents(repo.Profile("cross"), hub, []*spec.Cluster{edge})
	if err == nil || !strings.Contains(err.Error(), "cluster edge is pulled") {
		t.Errorf("a pulled source: %v", err)
	}
	if err := pulledEvents(repo.Profile("cross"), edge, []*spec.Cluster{hub}); err == nil {
		t.Error("a pulled destination was not refused")
	}
	if err := pulledEvents(repo.Profile("local"), edge, []*spec.Cluster{edge}); err != nil {
		t.Errorf("a local event pair on a pulled cluster: %v", err)
	}
}
