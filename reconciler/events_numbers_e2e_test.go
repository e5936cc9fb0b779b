package reconciler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/status"
)

const tlsServices = `apiVersion: regatta.dev/v1alpha1
kind: EventSource
metadata: {name: tls-services}
spec:
  resourceSelectors:
  - {version: v1, kind: Service, namespace: numbers}
`

// tlsConfigMaps compare the Service's port with 443 as Sveltos' templates
// do, without converting it: one per Service, and one for all of them.
const tlsConfigMaps = `apiVersion: v1
kind: ConfigMap
metadata: {name: "tls-{{ .Event.Name }}", namespace: numbers}
data:
  tls: "{{ if eq (index .Event.Resource.spec.ports 0).port 443 }}yes{{ else }}no{{ end }}"
  kind: "{{ kindOf (index .Event.Resource.spec.ports 0).port }}"
`

const tlsAllConfigMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: tls-all, namespace: numbers}
data:
  tls: "{{ range .Event.Resources }}{{ if eq (index .spec.ports 0).port 443 }}{{ .metadata.name }} {{ end }}{{ end }}"
`

// TestEventNumbers: a Service's port reaches the templates of a running
// daemon as an int64, so that eq compares it with 443, for one instance
// per resource (.Event.Resource) and one for all (.Event.Resources).
func TestEventNumbers(t *testing.T) {
	createNamespace(t, "c37", "numbers")
	trigger := func(name, oneForEvent string) string {
		return profileYAML(name, "events: numbers", "  eventTrigger: {eventSourceName: tls-services, oneForEvent: "+oneForEvent+
			"}\n  addons:\n  - name: cm\n    template: true\n    manifests: {path: "+name+"}\n")
	}
	h := eventFleet(t, map[string]string{
		"events/tls-services.yaml": tlsServices,
		"profiles/tls-each.yaml":   trigger("tls-each", "true"),
		"profiles/tls-all.yaml":    trigger("tls-all", "false"),
		"tls-each/cm.yaml":         tlsConfigMaps,
		"tls-all/cm.yaml":          tlsAllConfigMap,
	}, map[string]string{"c37": "events: numbers"})
	createService(t, "c37", "numbers", "web", nil, 443)
	createService(t, "c37", "numbers", "plain", nil, 80)
	applied := func() (bool, string) {
		for _, p := range []string{"tls-each", "tls-all"} {
			rec := h.pairRecord("c37", p)
			if rec.State != status.StateApplied || len(rec.EventInstances) == 0 {
				return false, fmt.Sprintf("pair %s: %s %s %+v", p, rec.State, rec.Message, rec.Error)
			}
		}
		return instanceResources(h, "c37", "tls-each") == "c37:Service/numbers/plain,c37:Service/numbers/web", ""
	}
	testenv.Eventually(t, 60*time.Second, func(context.Context) error {
		if ok, last := applied(); !ok {
			return fmt.Errorf("both pairs applied with their instances; last: %s", last)
		}
		return nil
	})
	got := map[string]string{}
	for _, in := range h.pairRecord("c37", "tls-each").EventInstances {
		cm := configMap(t, "c37", "numbers", "tls-"+in.Name)
		got[in.Resource] = cm["tls"] + " " + cm["kind"]
	}
	if got["Service/numbers/web"] != "yes int64" || got["Service/numbers/plain"] != "no int64" {
		t.Errorf("one per Service: %v, want web yes int64, plain no int64", got)
	}
	if all := configMap(t, "c37", "numbers", "tls-all")["tls"]; all != "web " {
		t.Errorf("for all: tls %q, want %q", all, "web ")
	}
}
