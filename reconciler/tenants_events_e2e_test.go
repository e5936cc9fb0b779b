package reconciler

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/status"
)

func createSecret(t *testing.T, cluster, ns, name, value string) {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"leak": "yes"}},
		StringData: map[string]string{"x": value},
	}
	if _, err := clientset(t, cluster).CoreV1().Secrets(ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

const leakSecrets = `apiVersion: regatta.dev/v1alpha1
kind: EventSource
metadata: {name: te-secrets}
spec:
  resourceSelectors:
  - version: v1
    kind: Secret
    labelFilters: [{key: leak, operation: Equal, value: "yes"}]
`

// teProfile is a tenant event profile copying every event's resource
// into a ConfigMap of the tenant's namespace.
func teProfile(name, trigger, addon string) string {
	return "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n" +
		"  eventTrigger:\n" + trigger +
		"  addons:\n  - name: copy\n    template: true\n    manifests: {path: tenants/te-a/" + addon + "}\n"
}

// TestTenantEventsReadOnlyTheGrant: a tenant's event profile naming a
// platform EventSource that selects every Secret sees only the Secrets of
// its own namespaces (one instance per resource, and all at once), also
// for Secrets created while the daemon runs; a cross-cluster profile whose
// source selector matches a cluster outside the tenant's grant is Failed
// at the selector's line, and nothing of that cluster reaches the tenant.
func TestTenantEventsReadOnlyTheGrant(t *testing.T) {
	for _, ns := range []string{"te-a", "te-b"} {
		createNamespace(t, "c36", ns)
	}
	createSecret(t, "c36", "te-a", "mine", "a-data")
	createSecret(t, "c36", "te-b", "theirs", "b-data")
	createSecret(t, "c35", "default", "remote", "remote-data")
	h := eventFleet(t, map[string]string{
		"events/te-secrets.yaml": leakSecrets,
		"tenants/te-a/tenant.yaml": tenantYAML("te-a", "{names: [c36]}", "[te-a]",
			"[{kind: ConfigMap}, {kind: Secret}]"),
		"tenants/te-a/profiles/te-a-copy.yaml": teProfile("te-a-copy",
			"    eventSourceName: te-secrets\n    oneForEvent: true\n    sourceClusterSelector: {matchLabels: {tedst: \"yes\"}}\n", "copy"),
		"tenants/te-a/copy/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n" +
			"  name: \"copy-{{ .Event.Resource.metadata.namespace }}-{{ .Event.Resource.metadata.name }}\"\n" +
			"  namespace: te-a\ndata: {seen: '{{ toJson .Event.Resource.data }}'}\n",
		"tenants/te-a/profiles/te-a-all.yaml": teProfile("te-a-all",
			"    eventSourceName: te-secrets\n    sourceClusterSelector: {matchLabels: {tedst: \"yes\"}}\n", "all"),
		"tenants/te-a/all/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: all, namespace: te-a}\n" +
			"data: {names: '{{ range .Event.Resources }}{{ .metadata.namespace }}/{{ .metadata.name }} {{ end }}'}\n",
		"tenants/te-a/profiles/te-a-x.yaml": teProfile("te-a-x",
			"    eventSourceName: te-secrets\n    oneForEvent: true\n    sourceClusterSelector:\n      matchLabels: {tesrc: \"yes\"}\n"+
				"    destinationClusterSelector: {matchLabels: {tedst: \"yes\"}}\n", "x"),
		"tenants/te-a/x/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"x-{{ .Event.Name }}\", namespace: te-a}\n" +
			"data: {from: '{{ .Event.SourceCluster }}', seen: '{{ toJson .Event.Resource.data }}'}\n",
	}, map[string]string{"c35": "tesrc: \"yes\"", "c36": "tedst: \"yes\""})

	testenv.WaitFor(t, 60*time.Second, "te-a's own Secret copied, once and in the aggregate, and the pairs recorded", func() bool {
		return configMap(t, "c36", "te-a", "copy-te-a-mine") != nil && configMap(t, "c36", "te-a", "all")["names"] == "te-a/mine " &&
			instanceResources(h, "c36", "te-a-copy") != "" && h.pairRecord("c36", "te-a-x").State != ""
	})
	if got := instanceResources(h, "c36", "te-a-copy"); got != "c36:Secret/te-a/mine" {
		t.Errorf("te-a-copy's instances: %s", got)
	}
	x := h.pairRecord("c36", "te-a-x")
	if x.State != status.StateFailed || x.Error == nil || x.Error.File != "tenants/te-a/profiles/te-a-x.yaml" || x.Error.Line != 8 ||
		!strings.Contains(x.Error.Message, "selects c35 as event source clusters, which tenant te-a was not granted") {
		t.Errorf("te-a-x reading c35: %s %+v", x.State, x.Error)
	}

	createSecret(t, "c36", "te-b", "later", "b-later")
	createSecret(t, "c36", "te-a", "later", "a-later")
	testenv.WaitFor(t, 60*time.Second, "te-a's new Secret copied", func() bool {
		return configMap(t, "c36", "te-a", "copy-te-a-later") != nil && configMap(t, "c36", "te-a", "all")["names"] == "te-a/later te-a/mine "
	})
	cms, err := clientset(t, "c36").CoreV1().ConfigMaps("te-a").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		for _, v := range cm.Data {
			if strings.Contains(v, "b-data") || strings.Contains(v, "b-later") || strings.Contains(v, "remote") ||
				strings.Contains(v, "c35") {
				t.Errorf("ConfigMap %s holds what tenant te-a was never granted: %v", cm.Name, cm.Data)
			}
		}
	}
	for _, name := range []string{"copy-te-b-theirs", "copy-te-b-later"} {
		if configMap(t, "c36", "te-a", name) != nil {
			t.Errorf("team b's Secret reached te-a as %s", name)
		}
	}
}
