package render

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/render/sandbox"
)

const yttTemplate = `#@ load("@ytt:data", "data")
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: #@ "facts-" + data.values.regatta.cluster.name
data:
  env: #@ data.values.regatta.cluster.labels["env"]
  team: #@ data.values.team
  size: #@ str(data.values.size)
`

// yttFiles is a platform repository with a ytt add-on: a folder of
// templates, a data-values file and inline values.
func yttFiles(template string) map[string]string {
	return map[string]string{
		"profiles/jp.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: jp}\nspec:\n  clusterRefs: [prod-eu-1]\n  addons:\n  - name: cfg\n" +
			"    ytt: {paths: [cfg/config], valuesFiles: [cfg/values.yml], values: {size: 3}}\n",
		"cfg/config/values.yml": "#@data/values\n---\nteam: none\nsize: 1\n",
		"cfg/config/cm.yml":     template,
		"cfg/values.yml":        "team: obs\n",
	}
}

// TestYttAddonSeesTheCluster renders a ytt add-on for two clusters: the
// templates read the cluster's name and labels as data values, with the
// data-values file and values layered over the templates' defaults.
func TestYttAddonSeesTheCluster(t *testing.T) {
	dir := tenantTree(t, yttFiles(yttTemplate))
	r := New(Options{})
	for _, env := range []string{"prod", "staging"} {
		c := prodCluster()
		c.Name, c.Labels = "c-"+env, map[string]string{"env": env}
		res, err := renderJsonnetTree(t, r, dir, c)
		if err != nil {
			t.Fatal(err)
		}
		objs := res.Objects()
		if len(objs) != 1 || objs[0].GetName() != "facts-c-"+env || objs[0].Source != "cfg/config" {
			t.Fatalf("objects: %v", objs)
		}
		data, _, _ := unstructuredStrings(objs[0].Object, "data")
		if data["env"] != env || data["team"] != "obs" || data["size"] != "3" {
			t.Fatalf("%s: data %v", env, data)
		}
	}
}

// TestYttErrorsAndConfinement: a template error names the repository
// file and line; a symlink leading out of a tenant's folder is refused;
// a schema that does not declare regatta says how to.
func TestYttErrorsAndConfinement(t *testing.T) {
	schema := yttFiles(yttTemplate)
	schema["cfg/config/values.yml"] = "#@data/values-schema\n---\nteam: none\nsize: 1\n"
	tests := map[string]struct {
		files map[string]string
		want  string
	}{
		"template error": {
			files: yttFiles("#@ load(\"@ytt:data\", \"data\")\n---\na: 1\nb: #@ data.values.missing\n"),
			want:  "cfg/config/cm.yml:4: ytt: - struct has no .missing field or method",
		},
		"undeclared regatta": {files: schema, want: "declare it in the schema"},
		"yaml error": {
			files: yttFiles("a: 1\nb: [\n"),
			want:  "cfg/config/cm.yml:2: ytt: Unmarshaling YAML template 'cm.yml'",
		},
		"tenant symlink": {
			files: map[string]string{
				"tenants/t/profiles/tp.yaml": tenantProfile("    ytt: {paths: [tenants/t/cfg]}\n"),
				"tenants/t/cfg/cm.yml":       "->../../../platform/secret.yaml",
			},
			want: "path leaves the tenant's folder",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) { wantRenderError(t, tc.files, tc.want) })
	}
}

// TestYttLoopFailsAlone: a template that loops fails its add-on at the
// sandbox's deadline; the next render works.
func TestYttLoopFailsAlone(t *testing.T) {
	r := New(Options{Sandbox: testSandbox(t, sandbox.Options{Timeout: time.Second})})
	_, err := renderJsonnetTree(t, r, tenantTree(t, yttFiles("#@ for i in range(1000000):\n#@ for j in range(1000000):\n#@ end\n#@ end\n")), prodCluster())
	if err == nil || !errors.Is(err, ErrTemplateLimit) || !strings.Contains(err.Error(), "ran longer than 1s") || !strings.Contains(err.Error(), "cfg/config") {
		t.Fatalf("error %v", err)
	}
	if _, err := renderJsonnetTree(t, r, tenantTree(t, yttFiles(yttTemplate)), prodCluster()); err != nil {
		t.Fatalf("the next render: %v", err)
	}
}

// TestYttPathsTemplated: ytt paths and values files are templated per
// cluster like other add-on paths: each cluster reads its own overlay and
// values file, and a path a template leads out of the repository is
// refused at its field.
func TestYttPathsTemplated(t *testing.T) {
	files := yttFiles(yttTemplate)
	files["profiles/jp.yaml"] = "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: jp}\nspec:\n  clusterRefs: [prod-eu-1]\n  addons:\n  - name: cfg\n" +
		"    ytt: {paths: [cfg/config, 'cfg/envs/{{ .Cluster.Labels.env }}'], valuesFiles: ['cfg/values-{{ .Cluster.Labels.env }}.yml']}\n"
	for _, env := range []string{"prod", "staging"} {
		files["cfg/values-"+env+".yml"] = "team: team-" + env + "\n"
		files["cfg/envs/"+env+"/overlay.yml"] = "#@ load(\"@ytt:overlay\", \"overlay\")\n#@overlay/match by=overlay.all\n---\n" +
			"metadata:\n  #@overlay/match missing_ok=True\n  annotations:\n    overlay: " + env + "\n"
	}
	dir := tenantTree(t, files)
	r := New(Options{})
	for _, env := range []string{"prod", "staging"} {
		c := prodCluster()
		c.Labels = map[string]string{"env": env}
		res, err := renderJsonnetTree(t, r, dir, c)
		if err != nil {
			t.Fatal(err)
		}
		objs := res.Objects()
		if len(objs) != 1 || objs[0].GetAnnotations()["overlay"] != env {
			t.Fatalf("%s: objects %v", env, objs)
		}
		data, _, _ := unstructuredStrings(objs[0].Object, "data")
		if data["team"] != "team-"+env || data["env"] != env {
			t.Fatalf("%s: data %v", env, data)
		}
	}
	c := prodCluster()
	c.Labels = map[string]string{"env": "../../../outside"}
	_, err := renderJsonnetTree(t, r, dir, c)
	if err == nil || !strings.Contains(err.Error(), "profiles/jp.yaml:8: spec.addons[0].ytt.paths[1]") ||
		!strings.Contains(err.Error(), "leaves the repository") {
		t.Fatalf("escaping path: %v", err)
	}
}
