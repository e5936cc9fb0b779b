package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/render/sandbox"
	"github.com/regatta-dev/regatta/spec"
)

// formsRepo writes a repository where each add-on form builds the same 20
// objects (10 Deployments and their Services) for one cluster.
func formsRepo(b *testing.B) string {
	dir := b.TempDir()
	var ks, deploys strings.Builder
	ks.WriteString("resources:\n")
	for i := range 10 {
		fmt.Fprintf(&ks, "- app%d.yaml\n", i)
		deploys.Reset()
		fmt.Fprintf(&deploys, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app%d, namespace: default, labels: {app: app%d}}\n"+
			"spec:\n  replicas: 2\n  selector: {matchLabels: {app: app%d}}\n  template:\n    metadata: {labels: {app: app%d}}\n"+
			"    spec: {containers: [{name: app, image: 'registry.example/app:1.0', ports: [{containerPort: 8080}]}]}\n---\n"+
			"apiVersion: v1\nkind: Service\nmetadata: {name: app%d, namespace: default}\nspec: {selector: {app: app%d}, ports: [{port: 80, targetPort: 8080}]}\n",
			i, i, i, i, i, i)
		writeBench(b, dir, fmt.Sprintf("kust/app%d.yaml", i), deploys.String())
	}
	writeBench(b, dir, "kust/kustomization.yaml", ks.String())
	writeBench(b, dir, "jsonnet/vendor/app.libsonnet", `{
  app(i):: [
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'app%d' % i, namespace: 'default', labels: { app: 'app%d' % i } },
      spec: { replicas: 2, selector: { matchLabels: { app: 'app%d' % i } }, template: { metadata: { labels: { app: 'app%d' % i } },
        spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0', ports: [{ containerPort: 8080 }] }] } } } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'app%d' % i, namespace: 'default' }, spec: { selector: { app: 'app%d' % i }, ports: [{ port: 80, targetPort: 8080 }] } },
  ],
}
`)
	writeBench(b, dir, "ytt/app.yml", `#@ for i in range(10):
#@ name = "app%d" % i
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: #@ name
  namespace: default
  labels:
    app: #@ name
spec:
  replicas: 2
  selector:
    matchLabels:
      app: #@ name
  template:
    metadata:
      labels:
        app: #@ name
    spec:
      containers:
      - name: app
        image: registry.example/app:1.0
        ports:
        - containerPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: #@ name
  namespace: default
spec:
  selector:
    app: #@ name
  ports:
  - port: 80
    targetPort: 8080
#@ end
`)
	writeBench(b, dir, "jsonnet/main.jsonnet", "local a = import 'app.libsonnet';\nstd.flattenArrays([a.app(i) for i in std.range(0, 9)])\n")
	profile := func(name, addon string) string {
		return "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n  clusterRefs: [prod-eu-1]\n  addons:\n  - name: a\n" + addon
	}
	writeBench(b, dir, "profiles/kustomize.yaml", profile("kustomize", "    kustomize: {path: kust}\n"))
	writeBench(b, dir, "profiles/ytt.yaml", profile("ytt", "    ytt: {paths: [ytt]}\n"))
	writeBench(b, dir, "profiles/jsonnet.yaml", profile("jsonnet", "    jsonnet: {path: jsonnet/main.jsonnet, jpath: [jsonnet/vendor]}\n"))
	writeBench(b, dir, "clusters/prod-eu-1/cluster.yaml", "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: prod-eu-1}\nspec: {}\n")
	return dir
}

func writeBench(b *testing.B, dir, name, body string) {
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRenderForms renders the same 20 objects from each add-on form,
// uncached: Kustomize, then Jsonnet and ytt each in this process and in a
// sandbox worker (the daemon's way).
func BenchmarkRenderForms(b *testing.B) {
	root, err := os.OpenRoot(formsRepo(b))
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	repo, diags := spec.Load(root.FS())
	if diags.Err() != nil {
		b.Fatal(diags)
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	pool := sandbox.New(sandbox.Options{Command: []string{exe}, Env: []string{sandbox.WorkerEnv + "=1"}})
	defer pool.Close()
	for _, c := range []struct {
		name, profile string
		opts          Options
	}{
		{"kustomize", "kustomize", Options{CacheBytes: -1}},
		{"jsonnet", "jsonnet", Options{CacheBytes: -1}},
		{"jsonnet-worker", "jsonnet", Options{CacheBytes: -1, Sandbox: pool}},
		{"ytt", "ytt", Options{CacheBytes: -1}},
		{"ytt-worker", "ytt", Options{CacheBytes: -1, Sandbox: pool}},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := New(c.opts)
			req := Request{FS: root.FS(), Profile: repo.Profile(c.profile), Cluster: prodCluster()}
			for b.Loop() {
				res, err := r.Render(context.Background(), req)
				if err != nil || len(res.Objects()) != 20 {
					b.Fatalf("%v", err)
				}
			}
		})
	}
}
