package apply_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// TestFreshManagerConfirmsWhatTheClusterHolds: a process applied a new
// render of a drift-detected profile and was killed before it recorded
// the inventory (its apply of "written" landed, nothing else). The
// Manager that takes over (a restarted daemon, a replica that gained the
// cluster) compares the objects a continuing Manager would skip with the
// cluster first: it does not apply "written" again, and applies the ones
// the kill left behind, a field the new render drops included.
func TestFreshManagerConfirmsWhatTheClusterHolds(t *testing.T) {
	ns := "takeover-confirm"
	killedM := apply.NewManager(t.Context(), testOptions())
	killed := target(t, killedM, mainCluster)
	render := func(hash string, written, dropped, changed map[string]string) apply.Request {
		return apply.Request{Profile: "takeover", SyncMode: spec.SyncModeContinuousWithDriftDetection, Revision: hash, RenderHash: hash,
			Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "written", written),
				configMap(ns, "dropped", dropped), configMap(ns, "changed", changed))}}
	}
	v := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	mustApplied(t, killed.Apply(t.Context(), render("h1", v("v", "1"), v("v", "1", "w", "1"), v("v", "1"))))
	next := render("h2", v("v", "2"), v("v", "1"), v("v", "2"))
	killedM.Close() // its drift watches would put "written" back
	// the killed process's last write: "written" at h2, as its pass applies it
	admin := kube(t, mainCluster)
	cm, live := configMap(ns, "written", v("v", "2")), getCM(t, admin, ns, "written")
	cm.SetLabels(live.Labels)
	cm.SetAnnotations(live.Annotations)
	if err := admin.Patch(t.Context(), cm, client.Apply, client.ForceOwnership, client.FieldOwner(apply.FieldManager)); err != nil {
		t.Fatal(err)
	}

	log := &requestLog{withQuery: true}
	opts := testOptions()
	opts.Client.WrapTransport = log.wrap
	taker := target(t, newManager(t, opts), mainCluster)
	res := taker.Apply(t.Context(), next)
	mustApplied(t, res)
	lines := log.reset()
	if got := applies(lines, "written"); len(got) != 0 {
		t.Errorf("the object the killed process applied was applied again: %v", got)
	}
	if len(applies(lines, "dropped")) == 0 || len(applies(lines, "changed")) == 0 {
		t.Errorf("the objects the kill left behind were not applied: %v", lines)
	}
	if d := getCM(t, admin, ns, "dropped").Data; len(d) != 1 || d["v"] != "1" {
		t.Errorf("the field the new render drops is still there: %v", d)
	}
	if d := getCM(t, admin, ns, "changed").Data; d["v"] != "2" {
		t.Errorf("changed: %v", d)
	}
	if res.Counts.Unchanged < 1 {
		t.Errorf("the confirmed object is not counted unchanged: %s", changes(res))
	}
}

// applies are the requests of lines (with their queries) to the object
// name that may write: not GETs, not dry runs.
func applies(lines []string, name string) []string {
	var out []string
	for _, l := range lines {
		path, query, _ := strings.Cut(l, "?")
		if strings.HasSuffix(path, "/"+name) && !strings.HasPrefix(l, "GET ") && !strings.Contains(query, "dryRun=All") {
			out = append(out, l)
		}
	}
	return out
}
