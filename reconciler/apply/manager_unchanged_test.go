package apply_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

// requestLog records "METHOD path" of every request but watches, with
// "?query" when withQuery is set.
type requestLog struct {
	withQuery bool
	mu        sync.Mutex
	lines     []string
}

func (l *requestLog) wrap(_ string, rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if !strings.Contains(req.URL.RawQuery, "watch=true") {
			line := req.Method + " " + req.URL.Path
			if l.withQuery {
				line += "?" + req.URL.RawQuery
			}
			l.mu.Lock()
			l.lines = append(l.lines, line)
			l.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (l *requestLog) reset() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

func mentioning(lines []string, name string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasSuffix(l, "/"+name) {
			out = append(out, l)
		}
	}
	return out
}

// TestSkipUnchangedAppliesOnlyWhatChanged: with SkipUnchanged, a pass
// after a healthy one sends no request for an object it would apply as it
// is, applies the changed and new ones, prunes the dropped one and keeps
// the unchanged one in the inventory (a later pass that drops nothing else
// deletes nothing). A pass without a healthy predecessor applies all.
func TestSkipUnchangedAppliesOnlyWhatChanged(t *testing.T) {
	log := &requestLog{}
	opts := testOptions()
	opts.Client.WrapTransport = log.wrap
	c := target(t, newManager(t, opts), mainCluster)
	ns := "skip-unchanged"
	req := apply.Request{Profile: "skip-unchanged", SkipUnchanged: true, Revision: "r1", RenderHash: "h1",
		Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "same", map[string]string{"v": "1"}),
			configMap(ns, "edited", map[string]string{"v": "1"}), configMap(ns, "dropped", map[string]string{"v": "1"}))}}
	mustApplied(t, c.Apply(t.Context(), req))
	log.reset()

	req.RenderHash = "h2"
	req.Steps = []apply.Step{step("a", namespace(ns), configMap(ns, "same", map[string]string{"v": "1"}),
		configMap(ns, "edited", map[string]string{"v": "2"}), configMap(ns, "added", map[string]string{"v": "1"}))}
	res := c.Apply(t.Context(), req)
	mustApplied(t, res)
	lines := log.reset()
	if got := mentioning(lines, "same"); len(got) != 0 {
		t.Errorf("requests for the unchanged object: %v", got)
	}
	if len(mentioning(lines, "edited")) == 0 || len(mentioning(lines, "added")) == 0 {
		t.Errorf("the changed and new objects were not applied: %v", lines)
	}
	if got := mentioning(lines, "dropped"); len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "DELETE") {
		t.Errorf("the dropped object was not pruned: %v", got)
	}
	if res.Counts.Unchanged < 2 || res.Counts.Deleted != 1 { // the Namespace and "same"
		t.Errorf("counts %+v", res.Counts)
	}
	kc := kube(t, mainCluster)
	if getCM(t, kc, ns, "same") == nil || getCM(t, kc, ns, "edited").Data["v"] != "2" {
		t.Error("objects not as desired")
	}

	// A third pass, one object changed: the skipped object of the second
	// pass is still in the inventory, so nothing is pruned.
	req.RenderHash = "h3"
	req.Steps[0].Objects[2] = configMap(ns, "edited", map[string]string{"v": "3"})
	res = c.Apply(t.Context(), req)
	mustApplied(t, res)
	if res.Counts.Deleted != 0 || getCM(t, kc, ns, "same") == nil || getCM(t, kc, ns, "added") == nil {
		t.Fatalf("a pass after a skipping one deleted objects: %+v", res.Counts)
	}
	if got := mentioning(log.reset(), "same"); len(got) != 0 {
		t.Errorf("requests for the unchanged object in the third pass: %v", got)
	}

	// Without SkipUnchanged, everything is applied again.
	req.SkipUnchanged, req.RenderHash = false, "h4"
	mustApplied(t, c.Apply(t.Context(), req))
	if got := mentioning(log.reset(), "same"); len(got) == 0 {
		t.Error("without SkipUnchanged the unchanged object was not applied")
	}
}
