package reconciler

import (
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/regatta-dev/regatta/spec"
)

// TestOCIScheduleQueuesTheArtifactsClusters: an artifact comes due one
// interval (the shortest of its add-ons) after it appears, and again one
// interval after that; a digest never comes due; when one comes due, the
// clusters its profiles match are queued, and no other.
func TestOCIScheduleQueuesTheArtifactsClusters(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	cluster := func(name, env string) *fstest.MapFile {
		return file("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: " + name + ", labels: {env: " + env + "}}\nspec: {}\n")
	}
	profile := func(name, env, oci string) *fstest.MapFile {
		return file("apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n  clusterSelector: {matchLabels: {env: " + env + "}}\n" +
			"  addons:\n  - name: app\n    oci: {url: 'oci://registry.example/fleet/" + oci + "}\n    kustomize: {path: app}\n")
	}
	repo, diags := spec.Load(fstest.MapFS{
		"clusters/p1/cluster.yaml": cluster("p1", "prod"),
		"clusters/p2/cluster.yaml": cluster("p2", "prod"),
		"clusters/s1/cluster.yaml": cluster("s1", "staging"),
		"clusters/d1/cluster.yaml": cluster("d1", "dev"),
		"profiles/prod.yaml":       profile("prod", "prod", "app', tag: stable, interval: 20s"),
		"profiles/prod-fast.yaml":  profile("prod-fast", "prod", "app', tag: stable, interval: 10s"),
		"profiles/staging.yaml":    profile("staging", "staging", "app', semver: '^1'"),
		"profiles/dev.yaml":        profile("dev", "dev", "app', digest: 'sha256:"+string(make([]byte, 0))+"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'"),
	})
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	tag := ociArtifact{"oci://registry.example/fleet/app", "stable", ""}
	rng := ociArtifact{"oci://registry.example/fleet/app", "", "^1"}
	every := movingArtifacts(repo)
	if want := map[ociArtifact]time.Duration{tag: 10 * time.Second, rng: time.Minute}; !equalDurations(every, want) {
		t.Fatalf("moving artifacts %v, want %v", every, want)
	}
	s := ociSchedule{next: map[ociArtifact]time.Time{}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		at   time.Duration
		due  []ociArtifact
		next time.Duration
	}{
		{0, nil, 10 * time.Second},
		{9 * time.Second, nil, 10 * time.Second},
		{10 * time.Second, []ociArtifact{tag}, 20 * time.Second},
		{20 * time.Second, []ociArtifact{tag}, 30 * time.Second},
		{60 * time.Second, []ociArtifact{tag, rng}, 70 * time.Second},
	} {
		due, next := s.due(every, t0.Add(tc.at))
		slices.SortFunc(due, func(a, b ociArtifact) int { return len(b.tag) - len(a.tag) })
		if !slices.Equal(due, tc.due) || !next.Equal(t0.Add(tc.next)) {
			t.Errorf("at %s: due %v next %s, want %v next %s", tc.at, due, next.Sub(t0), tc.due, tc.next)
		}
	}
	if due, next := s.due(nil, t0.Add(2*time.Minute)); len(due) != 0 || !next.IsZero() || len(s.next) != 0 {
		t.Errorf("artifacts gone from the revision: due %v, next %s, still scheduled %v", due, next, s.next)
	}

	d := NewDaemon(New(Options{}), DaemonOptions{})
	rev := &revision{repo: repo}
	if got := d.ociUsers(rev, []ociArtifact{tag}); !slices.Equal(got, []string{"p1", "p2"}) {
		t.Errorf("clusters queued for the tag: %v", got)
	}
	if got := d.ociUsers(rev, []ociArtifact{rng}); !slices.Equal(got, []string{"s1"}) {
		t.Errorf("clusters queued for the range: %v", got)
	}
}

func equalDurations(a, b map[ociArtifact]time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
