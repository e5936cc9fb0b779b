package reconciler

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/fstest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// checksAlert has three health checks over c37: one whose script fails
// at line 2, one over a kind the cluster does not serve, and one that
// finds the ConfigMaps labelled bad Degraded among those labelled app=hc.
const checksAlert = `apiVersion: regatta.dev/v1alpha1
kind: Alert
metadata: {name: checks}
spec:
  healthChecks:
  - name: broken
    resourceSelectors: [{version: v1, kind: ConfigMap, namespace: hc-pass}]
    script: |
      local hs = {}
      hs.resources = resources[1].data.nope.deeper
      return hs
  - name: no-such-kind
    resourceSelectors: [{group: example.com, version: v1, kind: Widget}]
    script: return {}
  - name: bad-configmaps
    resourceSelectors:
    - {version: v1, kind: ConfigMap, namespace: hc-pass, labelSelector: {matchLabels: {app: hc}}}
    scriptFile: checks/bad.lua
  notifications:
  - {name: events, type: kubernetesEvent}
`

const badConfigMaps = `local hs = {resources = {}}
for _, cm in ipairs(resources) do
  local st = "Healthy"
  if cm.metadata.labels.bad == "true" then st = "Degraded" end
  table.insert(hs.resources, {resource = cm, status = st, message = "tier " .. cm.data.tier})
end
return hs
`

// TestAlertHealthChecksInThePass: an alert's health checks run in the
// cluster's pass once its profiles are applied; a script error (with
// its file, field and Lua line) and a list the cluster cannot serve are
// recorded and stop neither the pass nor the next check, which lists
// what its label selector selects and records the Degraded ConfigMap.
func TestAlertHealthChecksInThePass(t *testing.T) {
	ctx := context.Background()
	cms := "apiVersion: v1\nkind: Namespace\nmetadata: {name: hc-pass}\n"
	for _, c := range []struct{ name, labels string }{{"good", "{app: hc}"}, {"bad", "{app: hc, bad: \"true\"}"}, {"other", "{app: other, bad: \"true\"}"}} {
		cms += fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: hc-pass, labels: %s}\ndata: {tier: %s}\n", c.name, c.labels, c.name)
	}
	_, h := oneClusterFleet(t, map[string]string{
		"profiles/hc.yaml":   "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: hc}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: cms\n    manifests: {path: hc}\n",
		"hc/cms.yaml":        cms,
		"alerts/checks.yaml": checksAlert,
		"checks/bad.lua":     badConfigMaps,
	})
	res, err := h.d.RunOnce(ctx)
	if err != nil {
		t.Fatalf("%v: %+v", err, res.Snapshot.Clusters)
	}
	var rec status.ClusterStatus
	for _, c := range res.Snapshot.Clusters {
		if c.Cluster == "c37" {
			rec = c
		}
	}
	applied := false
	for _, p := range rec.Profiles {
		applied = applied || (p.Name == "hc" && p.State == status.StateApplied)
	}
	if !applied {
		t.Fatalf("the pass did not apply the profile: %+v", rec.Profiles)
	}
	if len(rec.HealthChecks) != 3 {
		t.Fatalf("health checks %+v", rec.HealthChecks)
	}
	broken, noKind, bad := rec.HealthChecks[0], rec.HealthChecks[1], rec.HealthChecks[2]
	if broken.Check != "broken" || !strings.Contains(broken.Error, "alerts/checks.yaml spec.healthChecks[0].script:2: attempt to index a nil value") {
		t.Errorf("script error: %+v", broken)
	}
	if noKind.Check != "no-such-kind" || !strings.Contains(noKind.Error, "spec.healthChecks[1].resourceSelectors[0]: list example.com/v1 Widget") {
		t.Errorf("unserved kind: %+v", noKind)
	}
	want := status.HealthCheck{Alert: "checks", Check: "bad-configmaps", Objects: 2, Degraded: 1,
		Resources: []status.ResourceHealth{{Object: "ConfigMap hc-pass/bad", Status: "Degraded", Message: "tier bad"}}}
	if fmt.Sprint(bad) != fmt.Sprint(want) {
		t.Errorf("check bad-configmaps:\n got %+v\nwant %+v", bad, want)
	}
}

// TestHealthCheckListBounded: a check's list stops at its limit and says
// it was cut; a tenant's check lists nothing outside its grant.
func TestHealthCheckListBounded(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t, "c37")
	ns := "hc-bound"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	for i := range 8 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: ns}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f := testFactsClient(t)
	v1 := schema.GroupVersion{Version: "v1"}
	for _, tc := range []struct {
		limit, want int
		truncated   bool
	}{{5, 5, true}, {8, 8, false}, {100, 8, false}} {
		l := f.listBounded(ctx, v1, "ConfigMap", ns, "", nil, tc.limit)
		if l.err != nil || len(l.objs) != tc.want || l.truncated != tc.truncated {
			t.Errorf("limit %d: %d objects, truncated %v, %v; want %d, %v", tc.limit, len(l.objs), l.truncated, l.err, tc.want, tc.truncated)
		}
	}
	team := &spec.Tenant{Metadata: spec.ObjectMeta{Name: "team"}}
	team.Spec.Namespaces, team.Spec.Kinds = []string{"team-*"}, []spec.TenantKind{{Kind: "ConfigMap"}}
	if l := f.listBounded(ctx, v1, "ConfigMap", ns, "", team, 10); l.err == nil || !strings.Contains(l.err.Error(), "namespace hc-bound is not one of tenant team's namespaces") {
		t.Errorf("a tenant listed outside its namespaces: %d objects, %v", len(l.objs), l.err)
	}
	if l := f.listBounded(ctx, v1, "Namespace", "", "", team, 10); l.err == nil || !strings.Contains(l.err.Error(), "cluster-scoped kind Namespace") {
		t.Errorf("a tenant listed a cluster-scoped kind: %d objects, %v", len(l.objs), l.err)
	}
	// A list a platform check made in the pass is not the tenant's: a
	// selector of a tenant granted every namespaced kind ("*") that names
	// a cluster-scoped one is refused even when the platform listed it.
	p := &clusterPass{facts: f}
	lists := map[healthListKey]healthList{}
	rs := spec.HealthResourceSelector{Version: "v1", Kind: "Namespace", Namespace: "team-a"}
	if l := p.listForCheck(ctx, rs, nil, lists); l.err != nil || len(l.objs) == 0 {
		t.Fatalf("the platform's list: %d objects, %v", len(l.objs), l.err)
	}
	team.Spec.Kinds = []spec.TenantKind{{Kind: "*"}}
	if l := p.listForCheck(ctx, rs, team, lists); l.err == nil {
		t.Errorf("the tenant got the platform's list of Namespaces: %d objects", len(l.objs))
	}
}

// testFactsClient reads c37 without client-side rate limit.
func testFactsClient(tb testing.TB) *factsClient {
	cfg := env.Cluster("c37").RESTConfig()
	cfg.QPS, cfg.Burst = 1000, 1000 // the requests' cost, not a client-side rate limit
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	c := &spec.Cluster{Metadata: spec.ObjectMeta{Name: "c37"}}
	return &factsClient{disco: disco, dyn: dyn, cluster: c}
}

// BenchmarkAlertHealthCheck200 is one check's cost on one cluster per
// pass: listing 200 ConfigMaps from a real API server and running the
// script over them (one of ten Degraded).
func BenchmarkAlertHealthCheck200(b *testing.B) {
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(env.Cluster("c37").RESTConfig())
	if err != nil {
		b.Fatal(err)
	}
	ns := "hc-bench"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	for i := range 200 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: ns,
			Labels: map[string]string{"app": "hc", "bad": fmt.Sprint(i%10 == 0)}}, Data: map[string]string{"tier": "x"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	alert := `apiVersion: regatta.dev/v1alpha1
kind: Alert
metadata: {name: checks}
spec:
  healthChecks:
  - name: bad-configmaps
    resourceSelectors:
    - {version: v1, kind: ConfigMap, namespace: hc-bench, labelSelector: {matchLabels: {app: hc}}}
    scriptFile: checks/bad.lua
  notifications:
  - {name: events, type: kubernetesEvent}
`
	tree := fstest.MapFS{
		"alerts/checks.yaml":        {Data: []byte(alert)},
		"checks/bad.lua":            {Data: []byte(badConfigMaps)},
		"clusters/c37/cluster.yaml": {Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c37}\nspec:\n  kubeconfig: {secretRef: {}}\n")},
	}
	repo, diags := spec.Load(tree)
	if len(diags.Errors()) > 0 {
		b.Fatal(diags.Errors())
	}
	f := testFactsClient(b)
	r := New(Options{Lua: lua.NewRunner(lua.Options{})})
	c := repo.Clusters[0]
	b.ReportAllocs()
	for b.Loop() {
		p := &clusterPass{r: r, rev: &revision{tree: tree, repo: repo}, spec: c, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			facts: &factsClient{disco: f.disco, dyn: f.dyn, cluster: c}}
		p.healthChecks(ctx, nil)
		if len(p.st.HealthChecks) != 1 || p.st.HealthChecks[0].Degraded != 20 || p.st.HealthChecks[0].Objects != 200 {
			b.Fatalf("%+v", p.st.HealthChecks)
		}
	}
}
