package apply_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

// acceptRecorder records, per object path, the Accept header of each
// server-side apply (PATCH) a cluster's client sends.
type acceptRecorder struct {
	mu     sync.Mutex
	accept map[string]string
}

func (a *acceptRecorder) wrap(_ string, rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPatch {
			a.mu.Lock()
			a.accept[req.URL.Path] = req.Header.Get("Accept")
			a.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// metadataOnly reports whether the last apply of the object at path asked
// for its metadata only.
func (a *acceptRecorder) metadataOnly(t *testing.T, path string) bool {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	h, ok := a.accept[path]
	if !ok {
		t.Fatalf("no apply of %s was sent", path)
	}
	return strings.Contains(h, "as=PartialObjectMetadata")
}

// kindHealth judges the kinds it names, as a profile's health scripts do,
// and says so through apply.KindOverrides.
type kindHealth struct {
	kinds  map[string]bool
	status string
}

func (k kindHealth) Check(_ context.Context, obj *unstructured.Unstructured) (string, string, bool, error) {
	if !k.kinds[obj.GetKind()] {
		return "", "", false, nil
	}
	return k.status, "from the script", true, nil
}

func (k kindHealth) Overrides(_, kind string) bool { return k.kinds[kind] }

// An object of a kind without status, which no script judges, is applied
// for its metadata only; it still counts as healthy as applied, and an
// object that existed before (another field manager) as configured.
func TestApplyMetadataOnly(t *testing.T) {
	ns := "lean"
	rec := &acceptRecorder{accept: map[string]string{}}
	opts := testOptions()
	opts.Client.WrapTransport = rec.wrap
	m := newManager(t, opts)
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	if err := k.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "existing"}, Data: map[string]string{"a": "0"}}
	if err := k.Create(t.Context(), old, client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
	hc := kindHealth{kinds: map[string]bool{"Deployment": true}, status: apply.HealthProgressing}
	res := c.Apply(t.Context(), apply.Request{Profile: "lean", RenderHash: "h1", Health: hc, HealthTimeout: 10 * time.Second,
		Steps: []apply.Step{step("a", configMap(ns, "fresh", map[string]string{"a": "1"}), configMap(ns, "existing", map[string]string{"a": "1"}))}})
	mustApplied(t, res)
	if res.Counts.Created != 1 || res.Counts.Configured != 1 || res.Health.Healthy != 2 {
		t.Errorf("counts %+v health %+v; want 1 created, 1 configured, 2 healthy:\n%s", res.Counts, res.Health, changes(res))
	}
	for _, name := range []string{"fresh", "existing"} {
		if !rec.metadataOnly(t, "/api/v1/namespaces/"+ns+"/configmaps/"+name) {
			t.Errorf("ConfigMap %s was applied for the whole object, want its metadata only", name)
		}
		if cm := getCM(t, k, ns, name); cm == nil || cm.Data["a"] != "1" || cm.Labels[apply.LabelProfile] != "lean" {
			t.Errorf("ConfigMap %s not applied: %v", name, cm)
		}
	}
}

// A script that judges a kind without status gets the whole object, and
// its verdict holds.
func TestApplyMetadataOnlyNotForScriptedKinds(t *testing.T) {
	ns := "lean-scripted"
	rec := &acceptRecorder{accept: map[string]string{}}
	opts := testOptions()
	opts.Client.WrapTransport = rec.wrap
	m := newManager(t, opts)
	c := target(t, m, mainCluster)
	hc := kindHealth{kinds: map[string]bool{"ConfigMap": true}, status: apply.HealthProgressing}
	res := c.Apply(t.Context(), apply.Request{Profile: "lean-scripted", RenderHash: "h1", Health: hc, HealthTimeout: time.Second,
		Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "judged", nil))}})
	if res.State != apply.StateProgressing {
		t.Errorf("state %s, want Progressing (the script's verdict): %s", res.State, res.Error)
	}
	if rec.metadataOnly(t, "/api/v1/namespaces/"+ns+"/configmaps/judged") {
		t.Error("a ConfigMap a script judges was applied for its metadata only")
	}
}
