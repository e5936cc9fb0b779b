package diff

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// fleetFiles is a small fleet: n clusters alternating env=prod and
// env=staging, a kustomize profile with a production overlay, and a
// manifests profile for production.
func fleetFiles(n int) map[string]string {
	files := map[string]string{
		"profiles/web.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: web}
spec:
  clusterSelector:
    matchExpressions: [{key: env, operator: Exists}]
  addons:
  - name: web
    kustomize: {path: web/staging}
  overlays:
  - clusterSelector: {matchLabels: {env: prod}}
    addon: web
    path: web/prod
`,
		"profiles/ops.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: ops}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: ops
    manifests: {path: ops}
`,
		"web/base/kustomization.yaml":    "resources: [cm.yaml]\n",
		"web/base/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {replicas: \"1\"}\n",
		"web/prod/kustomization.yaml":    "namespace: web\nresources: [../base]\nlabels: [{pairs: {tier: prod}}]\n",
		"web/staging/kustomization.yaml": "namespace: web\nresources: [../base]\n",
		"ops/ns.yaml":                    "apiVersion: v1\nkind: Namespace\nmetadata: {name: ops}\n",
		"ops/secret.yaml":                "apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: ops}\nstringData: {token: first-secret-value}\n",
	}
	for i := range n {
		env := []string{"prod", "staging"}[i%2]
		name := fmt.Sprintf("c%02d", i)
		files["clusters/"+name+"/cluster.yaml"] = fmt.Sprintf(
			"apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\n  labels: {env: %s}\nspec: {}\n", name, env)
	}
	return files
}

// edit returns a copy of files with changes applied ("" deletes).
func edit(files map[string]string, changes map[string]string) map[string]string {
	out := maps.Clone(files)
	for k, v := range changes {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for k, v := range files {
		fsys[k] = &fstest.MapFile{Data: []byte(v), Mode: 0o644}
	}
	return fsys
}

// side loads files as one revision, with cluster.yaml labels as facts.
func loadSide(t *testing.T, rev string, files map[string]string) Side {
	t.Helper()
	fleet, diags := spec.Load(mapFS(files))
	if err := diags.Err(); err != nil {
		t.Fatalf("%s: %v", rev, err)
	}
	return Side{Ref: rev, Revision: rev, Fleet: fleet, Facts: func(c *spec.Cluster) render.ClusterFacts {
		return render.ClusterFacts{Name: c.Metadata.Name, Labels: c.Metadata.Labels, KubernetesVersion: "v1.37.0"}
	}}
}

func compare(t *testing.T, r *render.Renderer, base, head map[string]string) *Report {
	t.Helper()
	if r == nil {
		r = render.New(render.Options{})
	}
	rep, err := Compare(context.Background(), loadSide(t, "base", base), loadSide(t, "head", head), Options{Renderer: r, WarnClusters: 10})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
