package reconciler

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// eventFleet commits files and the given clusters to a new fleet and runs
// a daemon on it that follows no branch changes (events drive it).
func eventFleet(t *testing.T, files map[string]string, clusters map[string]string) *harness {
	t.Helper()
	f := newFleetRepo(t)
	for name, labels := range clusters {
		for k, v := range clusterFiles(t, name, labels) {
			files[k] = v
		}
	}
	f.Commit("fleet", files)
	h := newHarness(t, f, func(o *DaemonOptions) {
		o.StatusBranch = ""
		o.Watch.Interval, o.Watch.DisableFSNotify = time.Hour, true
	})
	t.Cleanup(h.d.Close)
	runDaemon(t, h)
	return h
}

func createNamespace(t *testing.T, cluster, ns string) {
	t.Helper()
	cs := clientset(t, cluster)
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
}

func createService(t *testing.T, cluster, ns, name string, labels map[string]string, ports ...int32) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": name}},
	}
	for _, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("p%d", p), Port: p, TargetPort: intstr.FromInt32(p)})
	}
	if _, err := clientset(t, cluster).CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deleteService(t *testing.T, cluster, ns, name string) {
	t.Helper()
	if err := clientset(t, cluster).CoreV1().Services(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// policiesFor returns the services the NetworkPolicies of ns were made for.
func policiesFor(t *testing.T, cluster, ns string) []string {
	t.Helper()
	l, err := clientset(t, cluster).NetworkingV1().NetworkPolicies(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, np := range l.Items {
		out = append(out, np.Labels["service"])
	}
	sort.Strings(out)
	return out
}

func instanceResources(h *harness, cluster, profile string) string {
	var out []string
	for _, in := range h.pairRecord(cluster, profile).EventInstances {
		out = append(out, in.SourceCluster+":"+in.Resource)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

const httpsServices = `apiVersion: regatta.dev/v1alpha1
kind: EventSource
metadata: {name: https-services}
spec:
  resourceSelectors:
  - version: v1
    kind: Service
    namespace: eng
    evaluate: |
      function evaluate()
        local hs = {matching = false}
        for _, p in ipairs(obj.spec.ports or {}) do
          if p.port == 443 or p.port == 8443 then hs.matching = true end
        end
        return hs
      end
`

const networkPolicy = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: "allow-{{ .Event.Name }}"
  namespace: "{{ .Event.Resource.metadata.namespace }}"
  labels: {service: "{{ .Event.Resource.metadata.name }}"}
spec:
  podSelector:
    matchLabels: {{ toJson .Event.Resource.spec.selector }}
  policyTypes: [Ingress]
  ingress:
  - ports:
{{- range .Event.Resource.spec.ports }}{{ if or (eq (int .port) 443) (eq (int .port) 8443) }}
    - {port: {{ .port }}, protocol: TCP}
{{- end }}{{ end }}
`

// TestEventServicesGetNetworkPolicies is the first example of the issue:
// every Service of namespace eng exposing 443 or 8443 gets a NetworkPolicy
// for that port, one per Service, withdrawn when the Service goes or stops
// exposing the port.
func TestEventServicesGetNetworkPolicies(t *testing.T) {
	createNamespace(t, "c37", "eng")
	h := eventFleet(t, map[string]string{
		"events/https-services.yaml": httpsServices,
		"profiles/netpol.yaml": profileYAML("netpol", "events: netpol",
			"  eventTrigger: {eventSourceName: https-services, oneForEvent: true}\n  addons:\n  - name: np\n    template: true\n    manifests: {path: netpol}\n"),
		"netpol/np.yaml": networkPolicy,
	}, map[string]string{"c37": "events: netpol"})
	testenv.WaitFor(t, 30*time.Second, "the pair applied with no instance", func() bool {
		return h.pairRecord("c37", "netpol").State == status.StateApplied
	})

	start := time.Now()
	createService(t, "c37", "eng", "web", nil, 443)
	createService(t, "c37", "eng", "api", nil, 80, 8443)
	createService(t, "c37", "eng", "plain", nil, 80)
	testenv.WaitFor(t, 30*time.Second, "policies for web and api", func() bool {
		return strings.Join(policiesFor(t, "c37", "eng"), ",") == "api,web"
	})
	t.Logf("event to applied: %s", time.Since(start))
	testenv.WaitFor(t, 10*time.Second, "the instances in status", func() bool {
		return instanceResources(h, "c37", "netpol") == "c37:Service/eng/api,c37:Service/eng/web"
	})
	checkEventRecords(t, h.pairRecord("c37", "netpol"))

	// web stops exposing 443; api goes.
	start = time.Now()
	svc, err := clientset(t, "c37").CoreV1().Services("eng").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}}
	if _, err := clientset(t, "c37").CoreV1().Services("eng").Update(context.Background(), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "web's policy withdrawn", func() bool {
		return strings.Join(policiesFor(t, "c37", "eng"), ",") == "api"
	})
	t.Logf("stopped matching to withdrawn: %s", time.Since(start))
	start = time.Now()
	deleteService(t, "c37", "eng", "api")
	testenv.WaitFor(t, 30*time.Second, "api's policy withdrawn", func() bool {
		return len(policiesFor(t, "c37", "eng")) == 0
	})
	t.Logf("gone to withdrawn: %s", time.Since(start))
	// The record follows the pass that pruned the policy.
	testenv.WaitFor(t, 10*time.Second, "the pair recorded without instances", func() bool {
		rec := h.pairRecord("c37", "netpol")
		return rec.State == status.StateApplied && len(rec.EventInstances) == 0
	})
}

// readyNode creates a Node through the API and marks it Ready (or not)
// in its status, as a kubelet would; it is deleted when the test ends.
func readyNode(t *testing.T, cluster, name string, ready bool) {
	t.Helper()
	cs := clientset(t, cluster)
	ctx := context.Background()
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		n, err = cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{"regatta-test": "events"}}}, metav1.CreateOptions{})
		t.Cleanup(func() { cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	if err != nil {
		t.Fatal(err)
	}
	cond := corev1.ConditionFalse
	if ready {
		cond = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: cond, Reason: "Test",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

const readyNodes = `apiVersion: regatta.dev/v1alpha1
kind: EventSource
metadata: {name: five-ready-nodes}
spec:
  resourceSelectors:
  - version: v1
    kind: Node
    labelFilters: [{key: regatta-test, operation: Equal, value: events}]
  aggregatedSelection: |
    function evaluate()
      local ready = 0
      for _, n in ipairs(resources) do
        for _, c in ipairs((n.status or {}).conditions or {}) do
          if c.type == "Ready" and c.status == "True" then ready = ready + 1 end
        end
      end
      return {matching = ready >= 5, message = ready .. " Ready nodes"}
    end
`

const monitoringStack = `apiVersion: v1
kind: ConfigMap
metadata: {name: monitoring-prometheus, namespace: default}
data: {cluster: "{{ .Event.SourceCluster }}"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: monitoring-grafana, namespace: default}
data: {cluster: "{{ .Event.SourceCluster }}"}
`

// TestEventReadyNodesDeployMonitoring is the second example: a cluster
// with at least 5 Ready Nodes gets a heavy monitoring stack (two
// ConfigMaps stand for it), removed when it falls below.
func TestEventReadyNodesDeployMonitoring(t *testing.T) {
	h := eventFleet(t, map[string]string{
		"events/five-ready-nodes.yaml": readyNodes,
		"profiles/monitoring.yaml": profileYAML("monitoring", "events: nodes",
			"  eventTrigger: {eventSourceName: five-ready-nodes}\n  addons:\n  - name: stack\n    template: true\n    manifests: {path: monitoring}\n"),
		"monitoring/stack.yaml": monitoringStack,
	}, map[string]string{"c36": "events: nodes"})
	for i := range 4 {
		readyNode(t, "c36", fmt.Sprintf("node-%d", i), true)
	}
	readyNode(t, "c36", "node-4", false)
	testenv.WaitFor(t, 30*time.Second, "the pair applied with no instance", func() bool {
		rec := h.pairRecord("c36", "monitoring")
		return rec.State == status.StateApplied && len(rec.EventInstances) == 0
	})
	if configMap(t, "c36", "default", "monitoring-prometheus") != nil {
		t.Fatal("monitoring deployed with 4 Ready nodes")
	}

	start := time.Now()
	readyNode(t, "c36", "node-4", true)
	testenv.WaitFor(t, 30*time.Second, "the monitoring stack", func() bool {
		return configMap(t, "c36", "default", "monitoring-prometheus")["cluster"] == "c36" &&
			configMap(t, "c36", "default", "monitoring-grafana") != nil
	})
	t.Logf("event to applied: %s", time.Since(start))
	// the record follows at the end of the pass that created the objects
	testenv.WaitFor(t, 10*time.Second, "the instance recorded", func() bool {
		return instanceResources(h, "c36", "monitoring") == "c36:5 resources"
	})

	start = time.Now()
	readyNode(t, "c36", "node-2", false)
	testenv.WaitFor(t, 30*time.Second, "the monitoring stack withdrawn", func() bool {
		return configMap(t, "c36", "default", "monitoring-prometheus") == nil &&
			configMap(t, "c36", "default", "monitoring-grafana") == nil
	})
	t.Logf("below 5 to withdrawn: %s", time.Since(start))
}

// TestEventCrossCluster: a Service labelled export=true in the cluster
// labelled role=shared produces a ConfigMap describing it in every
// cluster labelled role=app, and nowhere else; it goes when the Service
// does.
func TestEventCrossCluster(t *testing.T) {
	h := eventFleet(t, map[string]string{
		"events/exported.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: EventSource\nmetadata: {name: exported}\nspec:\n  resourceSelectors:\n  - version: v1\n    kind: Service\n    labelFilters: [{key: export, operation: Equal, value: \"true\"}]\n",
		"profiles/exports.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: exports}
spec:
  eventTrigger:
    eventSourceName: exported
    oneForEvent: true
    sourceClusterSelector: {matchLabels: {xrole: shared}}
    destinationClusterSelector: {matchLabels: {xrole: app}}
  addons:
  - name: describe
    template: true
    manifests: {path: exports}
`,
		"exports/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: "exported-{{ .Event.Name }}", namespace: default, labels: {exported: "yes"}}
data:
  cluster: "{{ .Event.SourceCluster }}"
  service: "{{ .Event.Resource.metadata.namespace }}/{{ .Event.Resource.metadata.name }}"
  ports: '{{ toJson .Event.Resource.spec.ports }}'
`,
	}, map[string]string{"c35": "xrole: shared", "c36": "xrole: app", "c37": "xrole: app"})
	exported := func(cluster string) []string {
		l, err := clientset(t, cluster).CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{LabelSelector: "exported=yes"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, cm := range l.Items {
			out = append(out, cm.Data["cluster"]+":"+cm.Data["service"])
		}
		return out
	}
	testenv.WaitFor(t, 30*time.Second, "the app clusters applied", func() bool {
		return h.pairRecord("c36", "exports").State == status.StateApplied && h.pairRecord("c37", "exports").State == status.StateApplied
	})
	start := time.Now()
	createService(t, "c35", "default", "shared-db", map[string]string{"export": "true"}, 5432)
	createService(t, "c35", "default", "internal", nil, 5433)
	testenv.WaitFor(t, 30*time.Second, "the ConfigMap in both app clusters", func() bool {
		return strings.Join(exported("c36"), ",") == "c35:default/shared-db" && strings.Join(exported("c37"), ",") == "c35:default/shared-db"
	})
	t.Logf("event to applied on 2 clusters: %s", time.Since(start))
	if got := exported("c35"); len(got) != 0 || h.pairRecord("c35", "exports").Name != "" {
		t.Errorf("the shared cluster got %v (pair %+v)", got, h.pairRecord("c35", "exports"))
	}
	start = time.Now()
	deleteService(t, "c35", "default", "shared-db")
	testenv.WaitFor(t, 30*time.Second, "the ConfigMaps withdrawn", func() bool {
		return len(exported("c36")) == 0 && len(exported("c37")) == 0
	})
	t.Logf("gone to withdrawn on 2 clusters: %s", time.Since(start))
	deleteService(t, "c35", "default", "internal")
}

// createConfigMaps creates n labelled ConfigMaps in ns at once, from 8
// goroutines, with a client that is not rate limited.
func createConfigMaps(t *testing.T, cluster, ns string, n int) {
	t.Helper()
	cfg := env.Cluster(cluster).RESTConfig()
	cfg.QPS, cfg.Burst = 2000, 2000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("src-%04d", i), Namespace: ns,
				Labels: map[string]string{"burst": "yes"}}}
			_, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

func countConfigMaps(t *testing.T, cluster, ns, selector string) int {
	t.Helper()
	l, err := clientset(t, cluster).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

const burstSource = "apiVersion: regatta.dev/v1alpha1\nkind: EventSource\nmetadata: {name: burst}\nspec:\n  resourceSelectors:\n  - version: v1\n    kind: ConfigMap\n    namespace: %s\n    labelFilters: [{key: burst, operation: Equal, value: \"yes\"}]\n"

const burstCopy = `apiVersion: v1
kind: ConfigMap
metadata: {name: "copy-{{ .Event.Name }}", namespace: %s, labels: {copy: "yes"}}
data: {of: "{{ .Event.Resource.metadata.name }}"}
`

// TestEventBurstIsBatched: 1,000 matching resources created at once are
// deployed by a few apply requests of the pair, not 1,000.
func TestEventBurstIsBatched(t *testing.T) {
	createNamespace(t, "c35", "burst-in")
	createNamespace(t, "c35", "burst-out")
	h, ssa := countedEventFleet(t, map[string]string{
		"events/burst.yaml": fmt.Sprintf(burstSource, "burst-in"),
		"profiles/burst.yaml": profileYAML("burst", "events: burst",
			"  eventTrigger: {eventSourceName: burst, oneForEvent: true, maxInstances: 2000}\n  addons:\n  - name: copies\n    template: true\n    manifests: {path: burst}\n"),
		"burst/cm.yaml": fmt.Sprintf(burstCopy, "burst-out"),
	}, map[string]string{"c35": "events: burst"})
	testenv.WaitFor(t, 30*time.Second, "the pair applied with no instance", func() bool {
		return h.pairRecord("c35", "burst").State == status.StateApplied
	})
	before := applies(h, "c35", "burst")
	applied0, dry0 := ssa.counts()
	start := time.Now()
	createConfigMaps(t, "c35", "burst-in", 1000)
	created := time.Since(start)
	testenv.WaitFor(t, 120*time.Second, "1,000 copies", func() bool {
		return countConfigMaps(t, "c35", "burst-out", "copy=yes") == 1000 && len(h.pairRecord("c35", "burst").EventInstances) == 1000
	})
	n := applies(h, "c35", "burst") - before
	applied, dry := ssa.counts()
	t.Logf("1,000 resources created in %s, all applied after %s by %v apply requests of the pair: %d SSA patches, %d SSA dry-runs",
		created, time.Since(start), n, applied-applied0, dry-dry0)
	if n > 20 {
		t.Errorf("%v apply requests for a burst of 1,000 resources, want a few", n)
	}
	oneMoreEvent(t, h, ssa)
}

// oneMoreEvent measures one event on a pair of 1,000 instances: one more
// resource, then one gone (whose copy must be pruned, the others kept).
func oneMoreEvent(t *testing.T, h *harness, ssa *patchCounter) {
	applied0, dry0 := ssa.counts()
	start := time.Now()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "src-late", Namespace: "burst-in", Labels: map[string]string{"burst": "yes"}}}
	if _, err := clientset(t, "c35").CoreV1().ConfigMaps("burst-in").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 60*time.Second, "the 1,001st copy", func() bool {
		return countConfigMaps(t, "c35", "burst-out", "copy=yes") == 1001 && len(h.pairRecord("c35", "burst").EventInstances) == 1001
	})
	applied, dry := ssa.counts()
	t.Logf("one more event on 1,000 instances: applied after %s, %d SSA patches, %d SSA dry-runs", time.Since(start), applied-applied0, dry-dry0)
	start = time.Now()
	if err := clientset(t, "c35").CoreV1().ConfigMaps("burst-in").Delete(context.Background(), "src-0007", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 60*time.Second, "the copy of a gone resource pruned", func() bool {
		return countConfigMaps(t, "c35", "burst-out", "copy=yes") == 1000 && len(h.pairRecord("c35", "burst").EventInstances) == 1000
	})
	t.Logf("one resource gone of 1,001: withdrawn after %s", time.Since(start))
}

// TestEventInstanceCap: more instances than maxInstances fail the pair
// with a clear error and deploy none of them; back under the cap, all are
// deployed.
func TestEventInstanceCap(t *testing.T) {
	createNamespace(t, "c36", "cap-in")
	createNamespace(t, "c36", "cap-out")
	h := eventFleet(t, map[string]string{
		"events/burst.yaml": fmt.Sprintf(burstSource, "cap-in"),
		"profiles/capped.yaml": profileYAML("capped", "events: cap",
			"  eventTrigger: {eventSourceName: burst, oneForEvent: true, maxInstances: 3}\n  addons:\n  - name: copies\n    template: true\n    manifests: {path: capped}\n"),
		"capped/cm.yaml": fmt.Sprintf(burstCopy, "cap-out"),
	}, map[string]string{"c36": "events: cap"})
	createConfigMaps(t, "c36", "cap-in", 4)
	testenv.WaitFor(t, 30*time.Second, "the pair to fail over the cap", func() bool {
		rec := h.pairRecord("c36", "capped")
		return rec.State == status.StateFailed && rec.Error != nil && strings.Contains(rec.Error.Message, "4 event instances exceed the cap of 3")
	})
	if n := countConfigMaps(t, "c36", "cap-out", "copy=yes"); n != 0 {
		t.Errorf("%d copies deployed over the cap, want none", n)
	}
	if err := clientset(t, "c36").CoreV1().ConfigMaps("cap-in").Delete(context.Background(), "src-0000", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "3 copies once under the cap", func() bool {
		return countConfigMaps(t, "c36", "cap-out", "copy=yes") == 3 && h.pairRecord("c36", "capped").State == status.StateApplied
	})
}

// TestEventInstancesDriftAndWithdrawal: an event instance of a
// drift-detected profile is restored when deleted out of band, and the
// profile's instances go with the profile when the cluster stops
// matching it (stopMatchingBehavior WithdrawPolicies).
func TestEventInstancesDriftAndWithdrawal(t *testing.T) {
	createNamespace(t, "c36", "drift-in")
	createNamespace(t, "c36", "drift-out")
	f := newFleetRepo(t)
	files := map[string]string{
		"events/burst.yaml": fmt.Sprintf(burstSource, "drift-in"),
		"profiles/drifty.yaml": profileYAML("drifty", "events: drift",
			"  syncMode: ContinuousWithDriftDetection\n  eventTrigger: {eventSourceName: burst, oneForEvent: true}\n  addons:\n  - name: copies\n    template: true\n    manifests: {path: drifty}\n"),
		"drifty/cm.yaml": fmt.Sprintf(burstCopy, "drift-out"),
	}
	for k, v := range clusterFiles(t, "c36", "events: drift") {
		files[k] = v
	}
	f.Commit("fleet", files)
	h := newHarness(t, f, func(o *DaemonOptions) {
		o.StatusBranch = ""
		o.Watch.Interval, o.Watch.DisableFSNotify = time.Hour, true
	})
	t.Cleanup(h.d.Close)
	runDaemon(t, h)
	createConfigMaps(t, "c36", "drift-in", 2)
	testenv.WaitFor(t, 30*time.Second, "2 copies, recorded", func() bool {
		return countConfigMaps(t, "c36", "drift-out", "copy=yes") == 2 && len(h.pairRecord("c36", "drifty").EventInstances) == 2
	})
	rec := h.pairRecord("c36", "drifty")
	if len(rec.EventInstances) != 2 || len(rec.EventInstances[0].Objects) != 1 {
		t.Fatalf("instances %+v", rec.EventInstances)
	}
	name := strings.TrimPrefix(rec.EventInstances[0].Objects[0], "ConfigMap/drift-out/")
	if err := clientset(t, "c36").CoreV1().ConfigMaps("drift-out").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "the deleted copy restored", func() bool { return configMap(t, "c36", "drift-out", name) != nil })

	f.Commit("c36 leaves the profile", clusterFiles(t, "c36", "events: none"))
	h.d.Trigger()
	testenv.WaitFor(t, 30*time.Second, "the copies withdrawn with the profile", func() bool {
		return countConfigMaps(t, "c36", "drift-out", "copy=yes") == 0
	})
	if n := h.r.events.Watches(); n != 1 {
		t.Errorf("%d event watches while the profile exists, want 1", n)
	}
	f.Commit("the event profile goes", map[string]string{"profiles/drifty.yaml": "", "events/burst.yaml": ""})
	h.d.Trigger()
	testenv.WaitFor(t, 30*time.Second, "the event watch stopped", func() bool { return h.r.events.Watches() == 0 })
}
