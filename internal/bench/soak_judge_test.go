package bench

import (
	"testing"

	"github.com/regatta-dev/regatta/reconciler/status"
)

func TestStatusWatchCheck(t *testing.T) {
	recs := func(gens map[string]int64) map[string]status.ClusterStatus {
		out := map[string]status.ClusterStatus{}
		for c, g := range gens {
			out[c] = status.ClusterStatus{Cluster: c, Generation: g}
		}
		return out
	}
	sw := newStatusWatch()
	fleet := []string{"a", "b"}
	sw.check(recs(map[string]int64{"a": 3, "b": 1}), fleet)
	sw.check(recs(map[string]int64{"a": 4, "b": 1}), fleet) // a moved on, b stayed: fine
	if got := sw.result(); got.Missing != 0 || got.Back != 0 {
		t.Fatalf("after two good reads: %+v", got)
	}
	sw.check(recs(map[string]int64{"a": 2}), fleet) // a set back, b missing
	got := sw.result()
	if got.Back != 1 || got.Missing != 1 || len(got.Notes) != 2 {
		t.Fatalf("a set back and b missing: %+v", got)
	}
	sw.forget("b")
	sw.check(recs(map[string]int64{"a": 4, "b": 1}), fleet) // b back afresh: not set back
	if got := sw.result(); got.Back != 1 || got.Missing != 1 {
		t.Errorf("a cluster that left and came back counted again: %+v", got)
	}
}

func TestConverged(t *testing.T) {
	applied := []status.Profile{{Name: "fa", State: status.StateApplied}, {Name: "fb", State: status.StateApplied}}
	recs := map[string]status.ClusterStatus{
		"a": {Cluster: "a", SourceRevision: "r2", Profiles: applied},
		"b": {Cluster: "b", SourceRevision: "r1", Profiles: applied},
		"c": {Cluster: "c", SourceRevision: "r2", Profiles: []status.Profile{{Name: "fa", State: status.StateApplied}, {Name: "fb", State: "Progressing"}}},
	}
	if ok, behind := converged(recs, []string{"a", "b", "c", "d"}, "r2", FleetProfiles); ok || behind != 3 {
		t.Errorf("b on r1, c progressing, d missing: converged %v, %d behind; want false, 3", ok, behind)
	}
	if ok, _ := converged(recs, []string{"a"}, "r2", FleetProfiles); !ok {
		t.Error("a alone is converged")
	}
}

func TestSoakApplies(t *testing.T) {
	m := map[string]float64{
		`regatta_applies_total{cluster="a",profile="fa"}`:           3, // first + 2 changes
		`regatta_applies_total{cluster="a",profile="fb"}`:           1,
		`regatta_applies_total{cluster="b",profile="fa"}`:           4, // first + 2 changes + 1 drift
		`regatta_drift_corrections_total{cluster="b",profile="fa"}`: 1,
		`regatta_applies_total{cluster="b",profile="fb"}`:           2, // applied twice: the tenant change re-applied it
		`regatta_applies_total{cluster="s",profile="fb"}`:           2, // first + back in the fleet
	}
	m[`regatta_applies_total{cluster="a",profile="fe"}`] = 2   // one event: deployed, withdrawn
	a := soakApplies(m, 2, 1, "s", map[string]float64{"a": 2}) // 2 profile changes, the spare back once
	if a.Applies != 14 || a.Expected != 13 {
		t.Errorf("applies %v, expected %v; want 14, 13", a.Applies, a.Expected)
	}
	if len(a.Over) != 1 || a.Over["b/fb"] != 1 {
		t.Errorf("over %v, want b/fb by 1", a.Over)
	}
	if a.check().OK {
		t.Error("a pair applied twice passed the check")
	}
}

func TestSoakRepoRotation(t *testing.T) {
	r := newSoakRepo([]string{"a", "b", "s"}, 2)
	var kinds []string
	for range 5 {
		kinds = append(kinds, r.next())
		if got := r.files()["clusters/s/cluster.yaml"]; (got == "") != r.spareOut {
			t.Fatalf("after %s the spare's cluster.yaml is %q", kinds[len(kinds)-1], got)
		}
	}
	want := []string{SoakProfileChange, SoakClusterRemove, SoakTenantChange, SoakClusterAdd, SoakProfileChange}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("rotation %v, want %v", kinds, want)
		}
	}
	if r.gen != 2 || r.tenant != 1 || r.returns != 1 || len(r.clusters()) != 3 {
		t.Errorf("gen %d tenant %d clusters %v", r.gen, r.tenant, r.clusters())
	}
}
