package plan

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/spec"
)

func profile(name string, sel map[string]string, deps ...string) *spec.Profile {
	return &spec.Profile{
		Metadata: spec.ObjectMeta{Name: name},
		Spec:     spec.ProfileSpec{ClusterSelector: spec.LabelSelector{MatchLabels: sel}, DependsOn: deps},
	}
}

// compiled loads profiles through spec.Load so their selectors are compiled.
func compiled(t testing.TB, ps ...*spec.Profile) []*spec.Profile {
	t.Helper()
	fsys := fleet(ps...)
	repo, diags := spec.Load(fsys)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	return repo.Profiles
}

func names(waves [][]*spec.Profile) [][]string {
	out := make([][]string, len(waves))
	for i, w := range waves {
		for _, p := range w {
			out[i] = append(out[i], p.Metadata.Name)
		}
	}
	return out
}

func TestWaves(t *testing.T) {
	ps := []*spec.Profile{
		profile("apps", nil, "ingress", "cert-manager"),
		profile("ingress", nil, "cert-manager"),
		profile("cert-manager", nil),
		profile("monitoring", nil),
		profile("dashboards", nil, "monitoring", "not-matched"),
	}
	waves, err := Waves(ps)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"cert-manager", "monitoring"}, {"dashboards", "ingress"}, {"apps"}}
	if got := names(waves); !reflect.DeepEqual(got, want) {
		t.Errorf("waves = %v, want %v", got, want)
	}
}

func TestWavesCycle(t *testing.T) {
	ps := []*spec.Profile{profile("a", nil, "b"), profile("b", nil, "c"), profile("c", nil, "a"), profile("d", nil)}
	_, err := Waves(ps)
	var ce *CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a CycleError", err)
	}
	if got := strings.Join(ce.Cycle, " -> "); got != "a -> b -> c -> a" {
		t.Errorf("cycle = %s", got)
	}
}

func TestMatch(t *testing.T) {
	ps := compiled(t,
		profile("cert-manager", map[string]string{"env": "prod"}),
		profile("apps", map[string]string{"env": "prod"}, "cert-manager"),
		profile("staging-apps", map[string]string{"env": "staging"}, "cert-manager"),
	)
	prod := Match(ps, Cluster{Name: "p1", Labels: map[string]string{"env": "prod"}})
	if got := names(prod.Waves); !reflect.DeepEqual(got, [][]string{{"cert-manager"}, {"apps"}}) || prod.Missing != nil {
		t.Errorf("prod: waves %v missing %v", got, prod.Missing)
	}
	staging := Match(ps, Cluster{Name: "s1", Labels: map[string]string{"env": "staging"}})
	if !reflect.DeepEqual(staging.Missing, map[string][]string{"staging-apps": {"cert-manager"}}) {
		t.Errorf("staging missing = %v", staging.Missing)
	}
}

func TestEffectiveLabels(t *testing.T) {
	static := map[string]string{"env": "prod", "kubernetes": "pinned"}
	got, notes := EffectiveLabels(static, []Classified{
		{Classifier: "k8s-v1-37", Labels: map[string]string{"kubernetes": "v1-37", "size": "large"}},
		{Classifier: "small", Labels: map[string]string{"size": "small"}},
		{Classifier: "gpu", Labels: map[string]string{"gpu": "true"}},
	})
	want := map[string]string{"env": "prod", "kubernetes": "pinned", "gpu": "true"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels = %v, want %v", got, want)
	}
	wantNotes := []LabelNote{
		{Key: "kubernetes", Reason: ReasonOverridden, Message: "cluster.yaml sets kubernetes=pinned over classifier labels (k8s-v1-37 sets v1-37)"},
		{Key: "size", Reason: ReasonConflict, Message: "classifiers disagree, label not set: k8s-v1-37 sets large, small sets small"},
	}
	if !reflect.DeepEqual(notes, wantNotes) {
		t.Errorf("notes = %#v", notes)
	}
	if static["gpu"] != "" {
		t.Error("EffectiveLabels modified its input")
	}
}

func BenchmarkMatch10000Clusters20Profiles(b *testing.B) {
	var ps []*spec.Profile
	for i := 0; i < 20; i++ {
		ps = append(ps, profile(fmt.Sprintf("p%02d", i), map[string]string{"env": []string{"prod", "staging", "dev"}[i%3]}))
	}
	ps = compiled(b, ps...)
	clusters := make([]Cluster, 10000)
	for i := range clusters {
		clusters[i] = Cluster{Name: fmt.Sprintf("c%05d", i), Labels: map[string]string{"env": []string{"prod", "staging", "dev"}[i%3], "region": "eu"}}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		MatchAll(ps, clusters)
	}
}
