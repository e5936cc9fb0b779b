package apply_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// objectRequests are the lines of lines that name object name (its own
// path), by method, dry runs apart.
func objectRequests(lines []string, name string) map[string]int {
	out := map[string]int{}
	for _, l := range lines {
		method, path, _ := strings.Cut(l, " ")
		path, query, _ := strings.Cut(path, "?")
		if !strings.HasSuffix(path, "/"+name) {
			continue
		}
		if strings.Contains(query, "dryRun") {
			method += "-dryrun"
		}
		out[method]++
	}
	return out
}

// TestChangedRenderAppliesEachObjectOnce: a pass on a changed render sends
// one server-side apply per object it already manages, with no GET and no
// dry-run first (ssa's ApplyAll sent a GET and a dry-run for each, and
// the health wait read each again). The apply of an unchanged object
// writes nothing (its resourceVersion stays) and counts as unchanged; a
// changed one counts as configured; an object edited out of band is
// restored and counts as configured.
func TestChangedRenderAppliesEachObjectOnce(t *testing.T) {
	log := &requestLog{withQuery: true}
	opts := testOptions()
	opts.Client.WrapTransport = log.wrap
	c := target(t, newManager(t, opts), mainCluster)
	ns := "direct-apply"
	objs := func(v string) []apply.Step {
		return []apply.Step{step("a", namespace(ns), configMap(ns, "same", map[string]string{"v": "1"}),
			configMap(ns, "edited", map[string]string{"v": v}), configMap(ns, "drifted", map[string]string{"v": "1"}))}
	}
	req := apply.Request{Profile: "direct-apply", Revision: "r1", RenderHash: "h1", Steps: objs("1")}
	mustApplied(t, c.Apply(t.Context(), req))
	kc := kube(t, mainCluster)
	before := getCM(t, kc, ns, "same").ResourceVersion
	drifted := getCM(t, kc, ns, "drifted")
	drifted.Data["v"] = "changed by hand"
	if err := kc.Update(t.Context(), drifted); err != nil {
		t.Fatal(err)
	}
	log.reset()

	req.Revision, req.RenderHash, req.Steps = "r2", "h2", objs("2")
	res := c.Apply(t.Context(), req)
	mustApplied(t, res)
	lines := log.reset()
	for _, name := range []string{"same", "edited", "drifted"} {
		if got := objectRequests(lines, name); len(got) != 1 || got["PATCH"] != 1 {
			t.Errorf("requests for %s: %v, want one PATCH\n%s", name, got, strings.Join(lines, "\n"))
		}
	}
	// The Namespace's metadata is read once to find its owner.
	if got := objectRequests(lines, ns); got["PATCH"] != 1 || got["PATCH-dryrun"] != 0 || got["GET"] > 1 {
		t.Errorf("requests for the Namespace: %v, want one PATCH\n%s", got, strings.Join(lines, "\n"))
	}
	for name, action := range map[string]apply.Action{"edited": apply.ActionConfigured, "drifted": apply.ActionConfigured} {
		if ch, ok := actionOf(res, "ConfigMap", name); !ok || ch.Action != action {
			t.Errorf("%s: %+v, want %s\n%s", name, ch, action, changes(res))
		}
	}
	if res.Counts.Unchanged != 2 || res.Counts.Configured != 2 || res.Counts.Created != 0 { // the Namespace and "same"
		t.Errorf("counts %+v, want 2 unchanged, 2 configured\n%s", res.Counts, changes(res))
	}
	if got := getCM(t, kc, ns, "same").ResourceVersion; got != before {
		t.Errorf("the unchanged ConfigMap was written: resourceVersion %s -> %s", before, got)
	}
	for name, v := range map[string]string{"edited": "2", "drifted": "1"} {
		if cm := getCM(t, kc, ns, name); cm == nil || cm.Data["v"] != v {
			t.Errorf("%s: %v, want v=%s", name, cmData(cm), v)
		}
	}
}

func cmData(cm *corev1.ConfigMap) map[string]string {
	if cm == nil {
		return nil
	}
	return cm.Data
}

// TestDriftDetectedProfileAppliesOnlyWhatChanged: a drift-detected profile
// whose watches track it sends no request, on a changed render, for an
// object whose health its metadata tells and whose desired state the
// previous healthy pass applied as it is (a fleet-wide one-line change
// applies one object per cluster); the changed object and the objects with
// a status (the Namespace, the Deployment) are applied once each. The
// skipped object stays tracked: an edit made to it afterwards is restored.
func TestDriftDetectedProfileAppliesOnlyWhatChanged(t *testing.T) {
	log := &requestLog{withQuery: true}
	opts := testOptions()
	opts.Client.WrapTransport = log.wrap
	c, k := target(t, newManager(t, opts), mainCluster), kube(t, mainCluster)
	ns := "drift-skip"
	steps := func(v string) []apply.Step {
		return []apply.Step{step("a", append([]*unstructured.Unstructured{namespace(ns),
			configMap(ns, "same", map[string]string{"v": "1"}), configMap(ns, "edited", map[string]string{"v": v})},
			objects(t, "deployment.yaml", "NAMESPACE", ns, "NAME", "app")...)...)}
	}
	readyWhenCreated(t, k, ns, "app")
	req := apply.Request{Profile: "drift-skip", Revision: "r1", RenderHash: "h1",
		SyncMode: spec.SyncModeContinuousWithDriftDetection, Steps: steps("1")}
	mustApplied(t, c.Apply(t.Context(), req))
	log.reset()

	req.Revision, req.RenderHash, req.Steps = "r2", "h2", steps("2")
	res := c.Apply(t.Context(), req)
	mustApplied(t, res)
	lines := log.reset()
	if got := objectRequests(lines, "same"); len(got) != 0 {
		t.Errorf("requests for the unchanged ConfigMap: %v\n%s", got, strings.Join(lines, "\n"))
	}
	for _, name := range []string{"edited", "app"} {
		if got := objectRequests(lines, name); len(got) != 1 || got["PATCH"] != 1 {
			t.Errorf("requests for %s: %v, want one PATCH\n%s", name, got, strings.Join(lines, "\n"))
		}
	}
	if res.Counts.Configured != 1 || res.Counts.Unchanged != 3 { // Namespace, Deployment, "same"
		t.Errorf("counts %+v, want 1 configured, 3 unchanged\n%s", res.Counts, changes(res))
	}
	if cm := getCM(t, k, ns, "edited"); cm.Data["v"] != "2" {
		t.Errorf("edited: %v", cm.Data)
	}
	mergePatch(t, k, getCM(t, k, ns, "same"), `{"data":{"v":"changed"}}`)
	testenv.WaitFor(t, 10*time.Second, "the skipped ConfigMap restored", func() bool {
		return getCM(t, k, ns, "same").Data["v"] == "1"
	})
}
