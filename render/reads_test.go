package render

import (
	"testing"
	"testing/fstest"
)

// readsRepo is a repository with profile t: one template: true manifests
// add-on whose ConfigMap's data.v is body.
func readsRepo(body string) fstest.MapFS {
	return fstest.MapFS{
		"profiles/t.yaml": {Data: []byte(`apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: t}
spec:
  addons:
  - name: a
    template: true
    manifests: {path: addons/a}
`)},
		"addons/a/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata:\n  v: |\n    " + body + "\n")},
	}
}

func readsCluster() ClusterFacts {
	return ClusterFacts{
		Name:   "a",
		Labels: map[string]string{"env": "prod", "team": "x"},
		Values: map[string]any{
			"replicas": 3,
			"ingress":  map[string]any{"host": "h", "class": "c"},
			"list":     []any{1, 2},
		},
		KubernetesVersion: "v1.37.2",
	}
}

type reqChange func(*Request)

func setName(n string) reqChange { return func(r *Request) { r.Cluster.Name = n } }
func setLabel(k, v string) reqChange {
	return func(r *Request) { r.Cluster.Labels[k] = v }
}
func setValue(k string, v any) reqChange { return func(r *Request) { r.Cluster.Values[k] = v } }
func setIngress(k, v string) reqChange {
	return func(r *Request) { r.Cluster.Values["ingress"].(map[string]any)[k] = v }
}

// TestRendersKeyedByDataRead proves, for every way a template reaches its
// data, that a cluster differing from the first only in data the template
// does not read shares its render, and one differing in data it reads
// gets its own (and the right output: the same as an uncached render).
func TestRendersKeyedByDataRead(t *testing.T) {
	cases := []struct {
		name, body   string
		unread, read reqChange
	}{
		{"label field", `{{ .Cluster.Labels.env }}`, setLabel("team", "y"), setLabel("env", "dev")},
		{"name", `{{ .Cluster.Name }}`, setLabel("env", "dev"), setName("b")},
		{"values field", `{{ .Cluster.Values.replicas }}`, setValue("list", []any{3}), setValue("replicas", 5)},
		{"nested values field", `{{ .Cluster.Values.ingress.host }}`, setIngress("class", "d"), setIngress("host", "i")},
		{"kubernetes version", `{{ .Cluster.KubernetesVersion }}`, setName("b"),
			func(r *Request) { r.Cluster.KubernetesVersion = "v1.36.0" }},
		{"revision", `{{ .Revision }}`, setName("b"), func(r *Request) { r.Revision = "rev2" }},
		{"index", `{{ index .Cluster.Labels "env" }}`, setLabel("team", "y"), setLabel("env", "dev")},
		{"index nested", `{{ index .Cluster.Values "ingress" "host" }}`, setIngress("class", "d"), setIngress("host", "i")},
		{"dig", `{{ dig "ingress" "host" "none" .Cluster.Values }}`, setIngress("class", "d"), setIngress("host", "i")},
		{"dig missing key", `{{ dig "tls" "secret" "none" .Cluster.Values }}`, setIngress("host", "i"), setValue("tls", map[string]any{"secret": "s"})},
		{"index missing key", `{{ index .Cluster.Labels "tier" | default "none" }}`, setLabel("env", "dev"), setLabel("tier", "gold")},
		{"range over labels", `{{ range $k, $v := .Cluster.Labels }}{{ $k }}={{ $v }},{{ end }}`, setName("b"), setLabel("team", "y")},
		{"range over a values list", `{{ range .Cluster.Values.list }}{{ . }},{{ end }}`, setValue("replicas", 5), setValue("list", []any{1})},
		{"with", `{{ with .Cluster.Values.ingress }}{{ .host }}{{ end }}`, setIngress("class", "d"), setIngress("host", "i")},
		{"with truth", `{{ with .Cluster.Values.ingress }}on{{ else }}off{{ end }}`, setIngress("host", "i"),
			setValue("ingress", map[string]any{})},
		{"with and $", `{{ with .Cluster.Values.ingress }}{{ $.Cluster.Labels.env }}{{ end }}`, setIngress("host", "i"), setLabel("env", "dev")},
		{"if eq", `{{ if eq .Cluster.Labels.env "prod" }}p{{ else }}o{{ end }}`, setLabel("team", "y"), setLabel("env", "dev")},
		{"variable", `{{ $l := .Cluster.Labels }}{{ $l.env }}`, setLabel("team", "y"), setLabel("env", "dev")},
		{"variable of a field", `{{ $c := .Cluster }}{{ $c.Values.replicas }}`, setName("b"), setValue("replicas", 5)},
		{"reassigned variable", `{{ $x := .Cluster.Labels }}{{ if true }}{{ $x = .Cluster.Values }}{{ end }}{{ $x.replicas }}`,
			setName("b"), setValue("replicas", 5)},
		{"template call", `{{ define "x" }}{{ .env }}{{ end }}{{ template "x" .Cluster.Labels }}`, setLabel("team", "y"), setLabel("env", "dev")},
		{"toJson of the cluster", `{{ toJson .Cluster }}`, func(r *Request) { r.Revision = "rev2" }, setLabel("team", "y")},
		{"sprig function given the values", `{{ get .Cluster.Values "replicas" }}`, setLabel("env", "dev"), setValue("replicas", 5)},
		{"keys of the values", `{{ keys .Cluster.Values | sortAlpha | join "," }}`, setName("b"), setValue("extra", 1)},
		{"len of values", `{{ len .Cluster.Values }}`, setLabel("env", "dev"), setValue("extra", 1)},
		{"pipeline into a function", `{{ .Cluster.Labels.env | upper }}`, setLabel("team", "y"), setLabel("env", "dev")},
		{"parenthesized index", `{{ (index .Cluster.Values "ingress").host }}`, setIngress("class", "d"), setIngress("host", "i")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := readsRepo(tc.body)
			base := func() Request {
				return Request{FS: fsys, Revision: "rev1", Profile: loadProfile(t, fsys, "t"), Cluster: readsCluster()}
			}
			for _, c := range []struct {
				what   string
				change reqChange
				share  bool
			}{{"unread data", tc.unread, true}, {"read data", tc.read, false}} {
				r := New(Options{})
				first := mustRender(t, r, base())
				req := base()
				c.change(&req)
				got := mustRender(t, r, req)
				fresh := mustRender(t, New(Options{CacheBytes: -1}), req)
				hits, misses := r.CacheStats()
				if shared := hits == 1 && misses == 1; shared != c.share {
					t.Errorf("%s: hits %d misses %d; want shared=%v", c.what, hits, misses, c.share)
				}
				if got.Hash != fresh.Hash {
					t.Errorf("%s: cached output differs from an uncached render", c.what)
				}
				if !c.share && got.Hash == first.Hash {
					t.Errorf("%s: the change does not change the output: the case proves nothing", c.what)
				}
			}
		})
	}
}

// TestMapPassedWholeIsReadWhole: a map given to a function counts as read
// entirely, even where the function looks at one key.
func TestMapPassedWholeIsReadWhole(t *testing.T) {
	for _, body := range []string{`{{ get .Cluster.Values "replicas" }}`, `{{ toJson .Cluster.Labels }}`, `{{ $v := .Cluster.Values }}{{ hasKey $v "replicas" }}`} {
		fsys := readsRepo(body)
		r := New(Options{})
		for i, change := range []reqChange{func(*Request) {}, setValue("list", []any{9}), setLabel("team", "z")} {
			req := Request{FS: fsys, Revision: "rev1", Profile: loadProfile(t, fsys, "t"), Cluster: readsCluster()}
			if i == 2 {
				req.Cluster.Values = readsCluster().Values
			}
			change(&req)
			mustRender(t, r, req)
		}
		if _, misses := r.CacheStats(); misses != 2 {
			t.Errorf("%s: %d renders for 3 clusters, one differing in the map passed whole; want 2", body, misses)
		}
	}
}

// pathsRepo has profile p with a manifests add-on at a templated path,
// not template: true, and two overlay folders.
func pathsRepo(path string) fstest.MapFS {
	cm := func(n string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + n + "}\n")}
	}
	return fstest.MapFS{
		"profiles/p.yaml": {Data: []byte(`apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: p}
spec:
  addons:
  - name: a
    manifests:
      path: '` + path + `'

`)},
		"addons/prod/cm.yaml": cm("prod"),
		"addons/dev/cm.yaml":  cm("dev"),
	}
}

// TestTemplatedPathKeyedByResult: clusters whose path renders to the same
// folder share one render, whatever data the path was computed from; a
// cluster whose path differs gets the other folder's objects.
func TestTemplatedPathKeyedByResult(t *testing.T) {
	for _, tc := range []struct {
		path        string
		renders     uint64
		wantObjects map[string]string
	}{
		{"addons/{{ .Cluster.Labels.env }}", 2, map[string]string{"c0": "prod", "c1": "dev", "c2": "prod", "c3": "dev"}},
		{"addons/{{ .Cluster.Name | trunc 0 }}prod", 1, map[string]string{"c0": "prod", "c1": "prod", "c2": "prod", "c3": "prod"}},
		{"addons/{{ if hasPrefix \"c1\" .Cluster.Name }}dev{{ else }}prod{{ end }}", 2, map[string]string{"c0": "prod", "c1": "dev", "c2": "prod", "c3": "prod"}},
	} {
		fsys := pathsRepo(tc.path)
		r := New(Options{})
		for i, env := range []string{"prod", "dev", "prod", "dev"} {
			c := readsCluster()
			c.Name = "c" + string(rune('0'+i))
			c.Labels["env"] = env
			res := mustRender(t, r, Request{FS: fsys, Revision: "rev1", Profile: loadProfile(t, fsys, "p"), Cluster: c})
			if got := res.Objects()[0].GetName(); got != tc.wantObjects[c.Name] {
				t.Errorf("%s: cluster %s got %s, want %s", tc.path, c.Name, got, tc.wantObjects[c.Name])
			}
		}
		if _, misses := r.CacheStats(); misses != tc.renders {
			t.Errorf("%s: %d renders, want %d", tc.path, misses, tc.renders)
		}
	}
}

// TestHelmValuesFileKeyedByDataRead: a Helm values file's content, like a
// template: true file, keys the render by what it reads: clusters that
// differ only in their names share the chart's render, a cluster whose
// label the file reads gets its own.
func TestHelmValuesFileKeyedByDataRead(t *testing.T) {
	fsys := memRepo(t)
	fsys["values/demo-common.yaml"] = &fstest.MapFile{Data: []byte("message: \"tier {{ .Cluster.Labels.tier }}\"\nreplicas: 2\n")}
	prof := loadProfile(t, fsys, "helm")
	r := New(Options{Helm: helmRenderer(t)})
	var hashes []string
	for i, tier := range []string{"gold", "gold", "silver"} {
		c := prodCluster()
		c.Name = "c" + string(rune('0'+i))
		c.Labels["tier"] = tier
		hashes = append(hashes, mustRender(t, r, Request{FS: fsys, Revision: "rev1", Profile: prof, Cluster: c}).Hash)
	}
	if _, misses := r.CacheStats(); misses != 2 {
		t.Errorf("%d renders for two tiers, want 2", misses)
	}
	if hashes[0] != hashes[1] || hashes[1] == hashes[2] {
		t.Errorf("outputs %v: want the gold ones equal and silver different", hashes)
	}
}

// TestKustomizeTemplateFileKeyedByDataRead: the same for a file Kustomize
// reads in a template: true Kustomize add-on.
func TestKustomizeTemplateFileKeyedByDataRead(t *testing.T) {
	fsys := fstest.MapFS{
		"profiles/k.yaml":      {Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: k}\nspec:\n  addons:\n  - name: k\n    template: true\n    kustomize: {path: k}\n")},
		"k/kustomization.yaml": {Data: []byte("resources: [cm.yaml]\nnamePrefix: \"{{ .Cluster.Labels.env }}-\"\n")},
		"k/cm.yaml":            {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {replicas: \"{{ .Cluster.Values.replicas }}\"}\n")},
	}
	r := New(Options{})
	for _, change := range []reqChange{func(*Request) {}, setName("b"), setLabel("team", "y"), setLabel("env", "dev"), setValue("replicas", 9)} {
		req := Request{FS: fsys, Revision: "rev1", Profile: loadProfile(t, fsys, "k"), Cluster: readsCluster()}
		change(&req)
		mustRender(t, r, req)
	}
	if _, misses := r.CacheStats(); misses != 3 {
		t.Errorf("%d renders, want 3 (the base, env changed, replicas changed)", misses)
	}
}
