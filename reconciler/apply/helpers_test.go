package apply_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/ssa/utils"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

// testOptions are Manager options for fast tests: short polls and timeouts.
func testOptions() apply.Options {
	opts := apply.DefaultOptions()
	opts.HealthPollInterval = 200 * time.Millisecond
	opts.HealthTimeout = 30 * time.Second
	opts.StageTimeout = 30 * time.Second
	opts.Client.Timeout = 5 * time.Second
	if os.Getenv("APPLY_DEBUG") != "" {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return opts
}

func newManager(t *testing.T, opts apply.Options) *apply.Manager {
	t.Helper()
	m := apply.NewManager(t.Context(), opts)
	t.Cleanup(m.Close)
	return m
}

// target returns the handle of a test cluster.
func target(t *testing.T, m *apply.Manager, name string) *apply.Cluster {
	t.Helper()
	c, err := m.Cluster(name, env.Cluster(name).Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kube returns an admin client of a test cluster for assertions.
func kube(t *testing.T, name string) client.Client {
	t.Helper()
	cfg := env.Cluster(name).RESTConfig()
	cfg.Timeout = 10 * time.Second
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// objects reads a testdata manifest, replacing NAMESPACE and NAME_SUFFIX.
func objects(t *testing.T, file string, vars ...string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer(vars...).Replace(string(data))
	objs, err := utils.ReadObjects(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return objs
}

func configMap(ns, name string, data map[string]string) *unstructured.Unstructured {
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"data":     d,
	}}
}

func namespace(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
}

func step(addon string, objs ...*unstructured.Unstructured) apply.Step {
	return apply.Step{Addon: addon, Phase: apply.PhaseMain, Objects: objs}
}

// get reads a live object, nil when not found.
func get(t *testing.T, c client.Client, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, u)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
	return u
}

var (
	cmGVK     = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	secretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	deployGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
)

func getCM(t *testing.T, c client.Client, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// markReady writes a Deployment's status as a deployment controller would
// once every replica is available.
func markReady(ctx context.Context, c client.Client, ns, name string) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(deployGVK)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return err
	}
	replicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	now := metav1.Now().UTC().Format(time.RFC3339)
	cond := func(typ, reason string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "reason": reason, "lastUpdateTime": now, "lastTransitionTime": now}
	}
	u.Object["status"] = map[string]any{
		"observedGeneration": u.GetGeneration(), "replicas": replicas, "updatedReplicas": replicas,
		"readyReplicas": replicas, "availableReplicas": replicas,
		"conditions": []any{cond("Available", "MinimumReplicasAvailable"), cond("Progressing", "NewReplicaSetAvailable")},
	}
	return c.Status().Update(ctx, u)
}

// readyWhenCreated marks a Deployment Ready as soon as it exists (the test
// plays the deployment controller); stop it with the returned function.
func readyWhenCreated(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if markReady(ctx, c, ns, name) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func mustApplied(t *testing.T, res apply.Result) {
	t.Helper()
	if res.State != apply.StateApplied || res.Err != nil {
		t.Fatalf("state %s, error %v; want Applied", res.State, res.Err)
	}
}

// requestCounter counts the requests of a cluster's clients by method;
// dry-run requests are counted apart.
type requestCounter struct {
	mu     sync.Mutex
	counts map[string]int
	// written are the paths of the write requests since the last reset.
	written []string
}

// countedOptions are testOptions whose clients count their requests.
func countedOptions() (apply.Options, *requestCounter) {
	counter := &requestCounter{counts: map[string]int{}}
	opts := testOptions()
	opts.Client.WrapTransport = counter.wrap
	return opts, counter
}

func (rc *requestCounter) wrap(_ string, rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if strings.Contains(req.URL.RawQuery, "watch=true") {
			return rt.RoundTrip(req) // the drift watcher's long-running watches
		}
		key := req.Method
		if strings.Contains(req.URL.RawQuery, "dryRun=All") {
			key += "-dryrun"
		}
		rc.mu.Lock()
		rc.counts[key]++
		if req.Method != http.MethodGet {
			rc.written = append(rc.written, req.URL.Path)
		}
		rc.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// writes returns the number of requests that could change the cluster.
func (rc *requestCounter) writes() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		n += rc.counts[m]
	}
	return n
}

func (rc *requestCounter) reset() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	old := rc.counts
	rc.counts, rc.written = map[string]int{}, nil
	return old
}

// wroteTo returns the write requests (dry-run included) since the last
// reset whose path contains fragment.
func (rc *requestCounter) wroteTo(fragment string) []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, p := range rc.written {
		if strings.Contains(p, fragment) {
			out = append(out, p)
		}
	}
	return out
}

// changes formats a Result's changes for failure messages.
func changes(res apply.Result) string {
	var b bytes.Buffer
	for _, ch := range res.Changes {
		fmt.Fprintf(&b, "  %s %s %s\n", ch.Object, ch.Action, ch.Message)
	}
	return b.String()
}

func actionOf(res apply.Result, kind, name string) (apply.ObjectChange, bool) {
	for _, ch := range res.Changes {
		if ch.Object.Kind == kind && ch.Object.Name == name {
			return ch, true
		}
	}
	return apply.ObjectChange{}, false
}
