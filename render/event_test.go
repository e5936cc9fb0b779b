package render

import (
	"context"
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/spec"
)

func eventRepo() fstest.MapFS {
	return fstest.MapFS{
		"clusters/c1/cluster.yaml": {Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c1, labels: {role: app}}\nspec: {kubeconfig: {secretRef: {}}}\n")},
		"events/svc.yaml":          {Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: EventSource\nmetadata: {name: svc}\nspec:\n  resourceSelectors: [{version: v1, kind: Service}]\n")},
		"profiles/np.yaml": {Data: []byte(`apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: np}
spec:
  clusterSelector: {matchLabels: {role: app}}
  eventTrigger: {eventSourceName: svc, oneForEvent: true}
  addons:
    - name: np
      template: true
      manifests: {path: addons/np}
`)},
		"addons/np/np.yaml": {Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: "{{ .Event.Name }}"
  namespace: "{{ .Event.Resource.metadata.namespace }}"
data:
  port: "{{ (index .Event.Resource.spec.ports 0).port }}"
  from: "{{ .Event.SourceCluster }}"
`)},
	}
}

func service(name string, port int64) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": "eng"},
		"spec":     map[string]any{"ports": []any{map[string]any{"port": port}}},
	}
}

// TestRenderEvent renders two instances of an event profile: each sees its
// own resource, and the render cache keeps them apart.
func TestRenderEvent(t *testing.T) {
	fsys := eventRepo()
	repo, diags := spec.Load(fsys)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	r := New(Options{})
	facts := FactsOf(repo.Cluster("c1"), map[string]string{"role": "app"}, "v1.37.2")
	render := func(name string, port int64) map[string]any {
		res, err := r.Render(context.Background(), Request{FS: fsys, Revision: "r1", Profile: repo.Profile("np"), Cluster: facts,
			Event: &EventData{Name: name, SourceCluster: "c1", Resource: service(name, port)}})
		if err != nil {
			t.Fatal(err)
		}
		objs := res.Objects()
		if len(objs) != 1 {
			t.Fatalf("%d objects", len(objs))
		}
		return objs[0].Object
	}
	a, b := render("web-1", 443), render("api-2", 8443)
	for _, c := range []struct {
		obj        map[string]any
		name, port string
	}{{a, "web-1", "443"}, {b, "api-2", "8443"}, {render("web-1", 443), "web-1", "443"}} {
		md := c.obj["metadata"].(map[string]any)
		data := c.obj["data"].(map[string]any)
		if md["name"] != c.name || md["namespace"] != "eng" || data["port"] != c.port || data["from"] != "c1" {
			t.Errorf("rendered %v, want name %s port %s from c1 in eng", c.obj, c.name, c.port)
		}
	}
}

// TestRenderEventNumbers: a template compares the event's numbers with
// constants (eq port 443) however the resource was decoded: JSON and YAML
// decoders give float64, a watch int64, the status branch int. Whole
// numbers are int64, others float64.
func TestRenderEventNumbers(t *testing.T) {
	fsys := eventRepo()
	fsys["addons/np/np.yaml"] = &fstest.MapFile{Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: "{{ .Event.Name }}", namespace: eng}
data:
  tls: "{{ if eq (index .Event.Resource.spec.ports 0).port 443 }}yes{{ else }}no{{ end }}"
  kinds: "{{ kindOf (index .Event.Resource.spec.ports 0).port }} {{ kindOf .Event.Resource.spec.weight }}"
  weight: "{{ .Event.Resource.spec.weight }}"
`)}
	repo, diags := spec.Load(fsys)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	facts := FactsOf(repo.Cluster("c1"), map[string]string{"role": "app"}, "v1.37.2")
	for _, port := range []any{float64(443), int64(443), 443, uint64(443), json.Number("443")} {
		svc := service("web", 0)
		svc["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"] = port
		svc["spec"].(map[string]any)["weight"] = 0.5
		// a renderer per case: the render cache must not hide a failure
		res, err := New(Options{}).Render(context.Background(), Request{FS: fsys, Revision: "r1", Profile: repo.Profile("np"), Cluster: facts,
			Event: &EventData{Name: "web", SourceCluster: "c1", Resource: svc}})
		if err != nil {
			t.Errorf("port %#v (%T): %v", port, port, err)
			continue
		}
		data := res.Objects()[0].Object["data"].(map[string]any)
		if data["tls"] != "yes" || data["kinds"] != "int64 float64" || data["weight"] != "0.5" {
			t.Errorf("port %#v (%T): rendered %v, want tls yes, kinds int64 float64, weight 0.5", port, port, data)
		}
		if _, ok := svc["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"].(int64); ok && port != int64(443) {
			t.Errorf("port %T: the caller's object was changed", port)
		}
	}
}
