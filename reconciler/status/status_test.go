package status

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func sample() Snapshot {
	return Snapshot{
		Fleet: Fleet{
			SourceRevision:  "f00dfeedcafe0000000000000000000000000000",
			AppliedRevision: "abc123def4560000000000000000000000000000",
			Errors: []Error{{File: "profiles/apps.yaml", Line: 14,
				Message: "spec.addons[1].kustomize.path: folder addons/x does not exist"}},
		},
		Clusters: []ClusterStatus{
			{
				Cluster: "staging-1", SourceRevision: "abc123def4560000000000000000000000000000",
				Reachable: false, Error: "Get \"https://127.0.0.1:6443/version\": connection refused",
				Labels: map[string]string{"env": "staging", "kubernetes": "v1-36"}, ClassifierLabelsStale: true,
				Profiles: []Profile{{Name: "infra", State: StateFailed, Error: &Error{Message: "cluster unreachable"}}},
			},
			{
				Cluster: "prod-eu-1", SourceRevision: "abc123def4560000000000000000000000000000",
				Reachable: true, KubernetesVersion: "v1.37.2",
				Labels:           map[string]string{"env": "prod", "kubernetes": "v1-37"},
				ClassifierLabels: map[string]map[string]string{"kubernetes-v1-37": {"kubernetes": "v1-37"}},
				LabelNotes:       []LabelNote{{Key: "size", Reason: "conflict", Message: "classifiers disagree, label not set: a sets large, b sets small"}},
				ClassifierErrors: []ClassifierError{{Classifier: "gpu", Message: "classifiers/gpu.yaml spec.deployedResourceConstraint.aggregatedClassification:3: attempt to index a nil value with key 'status'"}},
				Profiles: []Profile{
					{Name: "infra", State: StateApplied, Revision: "abc123def4560000000000000000000000000000", RenderHash: "sha256:1111", Objects: 12, Health: "Healthy"},
					{Name: "apps", State: StateFailed, Revision: "abc123def4560000000000000000000000000000", Objects: 3,
						Error: &Error{Object: "Deployment/apps/web", Message: "apply failed: admission webhook | denied"}},
					{Name: "dashboards", State: StateWaitingForDependency, Message: "waiting for apps (Failed)"},
				},
			},
		},
	}
}

func TestFilesGolden(t *testing.T) {
	files, err := Files(sample())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	want := []string{FleetFile, Dashboard, "status/clusters/prod-eu-1.yaml", "status/clusters/staging-1.yaml"}
	sort.Strings(want)
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("files = %v, want %v", names, want)
	}
	for _, name := range names {
		golden := filepath.Join("testdata", strings.ReplaceAll(name, "/", "_"))
		if *update {
			if err := os.WriteFile(golden, files[name], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if string(want) != string(files[name]) {
			t.Errorf("%s differs from %s:\n%s", name, golden, files[name])
		}
	}
}

func TestFilesDeterministic(t *testing.T) {
	a, _ := Files(sample())
	s := sample()
	s.Clusters[0], s.Clusters[1] = s.Clusters[1], s.Clusters[0]
	b, _ := Files(s)
	if !reflect.DeepEqual(a, b) {
		t.Error("the order of clusters changed the files")
	}
}

func TestReadRoundTrip(t *testing.T) {
	files, err := Files(sample())
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for name, b := range files {
		fsys[name] = &fstest.MapFile{Data: b}
	}
	got, err := Read(fsys)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Files(got)
	if !reflect.DeepEqual(files, again) {
		t.Error("read and written status differ")
	}
	if empty, err := Read(fstest.MapFS{}); err != nil || len(empty.Clusters) != 0 {
		t.Errorf("empty tree: %v %v", empty, err)
	}
}

// TestDashboardPairsOnOtherRevisions: pairs move on their own, so the
// dashboard counts those on another revision than the one in force and
// lists the progressing ones with what they wait for.
func TestDashboardPairsOnOtherRevisions(t *testing.T) {
	old, cur := strings.Repeat("a", 40), strings.Repeat("b", 40)
	s := Snapshot{Fleet: Fleet{SourceRevision: cur, AppliedRevision: cur}, Clusters: []ClusterStatus{{
		Cluster: "c1", Reachable: true, SourceRevision: cur, Profiles: []Profile{
			{Name: "app", State: StateApplied, Revision: cur},
			{Name: "once", State: StateApplied, Revision: old},
			{Name: "web", State: StateProgressing, Revision: cur, Message: "add-on web: waiting until 2026-12-01T10:00:00Z for Deployment/web/web"},
		}}}}
	got := RenderDashboard(s)
	for _, want := range []string{
		"Pairs: 2 Applied, 1 Progressing · 1 on another revision than `bbbbbbbb`",
		"| c1 | yes | - | ✅ Applied `bbbbbbbb` | ✅ Applied `aaaaaaaa` | ⏳ Progressing `bbbbbbbb` |",
		"- **c1 / web** (Progressing): add-on web: waiting until 2026-12-01T10:00:00Z for Deployment/web/web",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("dashboard lacks %q:\n%s", want, got)
		}
	}
}

// TestDashboardDependencies: the dashboard draws the dependsOn graph, one
// node per profile and an arrow from each dependency to its dependent.
func TestDashboardDependencies(t *testing.T) {
	rev := strings.Repeat("c", 40)
	s := Snapshot{
		Fleet: Fleet{SourceRevision: rev, AppliedRevision: rev, DependsOn: []ProfileDependency{
			{Profile: "apps", DependsOn: []string{"cert-manager", "ingress"}},
			{Profile: "ingress", DependsOn: []string{"cert-manager"}},
		}},
		Clusters: []ClusterStatus{{Cluster: "c1", Reachable: true, SourceRevision: rev}},
	}
	got := RenderDashboard(s)
	want := "## Profile dependencies\n\n```mermaid\nflowchart LR\n" +
		"  p0[\"apps\"]\n  p1[\"cert-manager\"]\n  p1 --> p0\n  p2[\"ingress\"]\n  p2 --> p0\n  p1 --> p2\n```\n"
	if !strings.Contains(got, want) {
		t.Errorf("dashboard lacks the graph %q:\n%s", want, got)
	}
	if strings.Contains(RenderDashboard(Snapshot{Fleet: Fleet{SourceRevision: rev}, Clusters: s.Clusters}), "Profile dependencies") {
		t.Error("a fleet without dependsOn got a dependency graph")
	}
}
