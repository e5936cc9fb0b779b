package reconciler

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

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
	f.commit("fleet", files)
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
	waitFor(t, 30*time.Second, "the pair applied with no instance", func() bool {
		return h.pairRecord("c37", "netpol").State == status.StateApplied
	})

	start := time.Now()
	createService(t, "c37", "eng", "web", nil, 443)
	createService(t, "c37", "eng", "api", nil, 80, 8443)
	createService(t, "c37", "eng", "plain", nil, 80)
	waitFor(t, 30*time.Second, "policies for web and api", func() bool {
		return strings.Join(policiesFor(t, "c37", "eng"), ",") == "api,web"
	})
	t.Logf("event to applied: %s", time.Since(start))
	waitFor(t, 10*time.Second, "the instances in status", func() bool {
		return instanceResources(h, "c37", "netpol") == "c37:Service/eng/api,c37:Service/eng/web"
	})

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
	waitFor(t, 30*time.Second, "web's policy withdrawn", func() bool {
		return strings.Join(policiesFor(t, "c37", "eng"), ",") == "api"
	})
	t.Logf("stopped matching to withdrawn: %s", time.Since(start))
	start = time.Now()
	deleteService(t, "c37", "eng", "api")
	waitFor(t, 30*time.Second, "api's policy withdrawn", func() bool {
		return len(policiesFor(t, "c37", "eng")) == 0
	})
	t.Logf("gone to withdrawn: %s", time.Since(start))
	if rec := h.pairRecord("c37", "netpol"); rec.State != status.StateApplied || len(rec.EventInstances) != 0 {
		t.Errorf("pair after its events went: %+v", rec)
	}
}
