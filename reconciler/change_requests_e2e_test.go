package reconciler

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// entryRequests records "METHOD path" of one cluster entry's requests but
// watches, metadata-only ones marked.
type entryRequests struct {
	entry string
	mu    sync.Mutex
	lines []string
	last  time.Time // of the last request recorded
}

func (l *entryRequests) wrap(aopts *apply.Options) {
	aopts.Client.WrapTransport = func(cluster string, rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if cluster == l.entry && !strings.Contains(req.URL.RawQuery, "watch=true") {
				line := req.Method + " " + req.URL.Path
				if strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata") {
					line += " (metadata)"
				}
				l.mu.Lock()
				l.lines, l.last = append(l.lines, line), time.Now()
				l.mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	}
}

func (l *entryRequests) reset() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	slices.Sort(out)
	return out
}

// quietFor reports whether no request was recorded for d.
func (l *entryRequests) quietFor(d time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Since(l.last) >= d
}

// has reports whether every one of lines was recorded since the last reset.
func (l *entryRequests) has(lines ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range lines {
		if !slices.Contains(l.lines, line) {
			return false
		}
	}
	return true
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// benchObjects are the fleet benchmark's objects of a profile in namespace
// ns: a marker ConfigMap whose generation line a fleet-wide change edits,
// ConfigMaps, a ServiceAccount and a Secret.
func benchObjects(profile, ns string, generation int) string {
	docs := []string{fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-marker\n  namespace: %s\ndata:\n  generation: \"%d\"\n", profile, ns, generation)}
	for i, kind := range []string{"ConfigMap", "ServiceAccount", "Secret", "ConfigMap"} {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: %s\nmetadata:\n  name: %s-%d\n  namespace: %s\n", kind, profile, i, ns))
	}
	return strings.Join(docs, "---\n")
}

// benchProfiles are the fleet benchmark's two profiles: fc-drift
// (ContinuousWithDriftDetection, templated) and fc-kust (Kustomize, the
// namespace substituted by postBuild), at a generation of fc-drift.
func benchProfiles(generation int) map[string]string {
	return map[string]string{
		"profiles/fc-drift.yaml": profileYAML("fc-drift", "bench: change", "  syncMode: ContinuousWithDriftDetection\n  addons:\n"+
			"  - name: app\n    template: true\n    manifests: {path: fc/drift}\n"),
		"profiles/fc-kust.yaml": profileYAML("fc-kust", "bench: change", "  addons:\n  - name: app\n    kustomize: {path: fc/kust}\n"+
			"    postBuild:\n      substitute: {ns: \"s-{{ .Cluster.Name }}\"}\n"),
		"fc/drift/objects.yaml":      benchObjects("fc-drift", "\"s-{{ .Cluster.Name }}\"", generation),
		"fc/kust/kustomization.yaml": "resources: [objects.yaml]\n",
		"fc/kust/objects.yaml":       benchObjects("fc-kust", "${ns}", 0),
	}
}

// TestFleetWideChangeRequests: the fleet benchmark's one-line change (a
// ConfigMap of a drift-detected profile), seen from one namespace-scoped
// entry, costs the cluster five requests: the version (classification),
// the inventories' metadata, the owners' metadata of the changed object's
// kind, the changed object's apply and the inventory's. The unchanged
// objects are not sent (the watches restore drift), the unchanged
// Kustomize profile is skipped, nothing is read to compare, and the
// registration is not read again while the clusters folder is the same;
// a commit to the clusters folder reads it again.
func TestFleetWideChangeRequests(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	files := benchProfiles(0)
	kc, err := env.Cluster("c36").NamespaceUser(ctx, "fc-a", []string{"s-fc-a"}, "127.0.9.1")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range entryFiles(t, "fc-a", "bench: change", kc, "  namespaces: [s-fc-a]\n") {
		files[k] = v
	}
	f.Commit("fleet", files)
	reqs := &entryRequests{entry: "fc-a"}
	h := newHarnessWith(t, f, func(o *DaemonOptions) { o.StatusBranch = "" }, reqs.wrap)
	if _, err := h.d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	// The drift watches list their kinds when they start, which may be
	// after the pass: those lists belong to the first rollout, not to the
	// change.
	testenv.WaitFor(t, 20*time.Second, "the drift watches' first lists", func() bool {
		return reqs.has("GET /api/v1/namespaces/s-fc-a/configmaps", "GET /api/v1/namespaces/s-fc-a/secrets",
			"GET /api/v1/namespaces/s-fc-a/serviceaccounts")
	})
	// Their first comparison of the tracked objects (a list from the
	// API server's watch cache may predate the pass's writes: a dry run
	// then finds them in sync) belongs to it too.
	testenv.WaitFor(t, 20*time.Second, "the drift watches settled", func() bool { return reqs.quietFor(time.Second) })
	reqs.reset()

	f.Commit("one-line change", benchProfiles(1))
	res, err := h.d.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := pairs(res, "fc-a")["fc-drift"]; p.State != status.StateApplied {
		t.Fatalf("fc-drift %s %v, want Applied", p.State, p.Error)
	}
	if got := configMap(t, "c36", "s-fc-a", "fc-drift-marker")["generation"]; got != "1" {
		t.Fatalf("marker generation %q, want 1", got)
	}
	want := []string{
		"GET /api/v1/namespaces/s-fc-a/configmaps (metadata)", // inventories
		"GET /api/v1/namespaces/s-fc-a/configmaps (metadata)", // owners of the changed ConfigMap
		"GET /version",
		"PATCH /api/v1/namespaces/s-fc-a/configmaps/fc-drift-marker (metadata)",
		"PATCH /api/v1/namespaces/s-fc-a/configmaps/regatta-inv-fc-drift (metadata)",
	}
	if got := reqs.reset(); !slices.Equal(got, want) {
		t.Errorf("requests of the change:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	files = entryFiles(t, "fc-a", "bench: change, edited: \"yes\"", kc, "  namespaces: [s-fc-a]\n")
	f.Commit("the entry's labels edited", files)
	if _, err := h.d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	reg := "GET /api/v1/namespaces/s-fc-a/configmaps/" + apply.RegistrationName
	if got := reqs.reset(); !slices.Contains(got, reg) {
		t.Errorf("after a commit to the clusters folder the registration was not read again:\n  %s", strings.Join(got, "\n  "))
	}
}
