package render

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/spec"
)

// TestFluxFeaturesGolden renders the Flux-compatible features: ${var}
// substitution of a folder without kustomization.yaml (wait: false), and
// a chart with valuesFrom, a matching chartVersion range and tests on.
func TestFluxFeaturesGolden(t *testing.T) {
	fsys := os.DirFS(repoDir)
	r := New(Options{Helm: helmRenderer(t)})
	for _, name := range []string{"substitute", "valuesfrom"} {
		t.Run(name, func(t *testing.T) {
			res, err := r.Render(context.Background(), request(t, fsys, name, prodCluster()))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name, dump(t, res))
		})
	}
}

// TestSubstituteDependsOnCluster: the render cache keys a substituted
// add-on by the cluster's data.
func TestSubstituteDependsOnCluster(t *testing.T) {
	fsys := os.DirFS(repoDir)
	r := New(Options{})
	staging := prodCluster()
	staging.Labels = map[string]string{"fleet": "yes", "env": "staging", "region": "eu"}
	names := map[string]bool{}
	for _, c := range []ClusterFacts{prodCluster(), staging, prodCluster()} {
		res, err := r.Render(context.Background(), request(t, fsys, "substitute", c))
		if err != nil {
			t.Fatal(err)
		}
		names[res.Steps[0].Objects[0].GetName()] = true
	}
	if len(names) != 2 || !names["vars-prod"] || !names["vars-staging"] {
		t.Errorf("rendered ConfigMap names %v, want vars-prod and vars-staging", names)
	}
}

func TestFluxFeatureErrors(t *testing.T) {
	fsys := os.DirFS(repoDir)
	r := New(Options{Helm: helmRenderer(t)})
	base := loadProfile(t, fsys, "valuesfrom")
	cases := []struct {
		name  string
		addon spec.Addon
		want  string
	}{
		{"chart version", spec.Addon{Name: "demo", Helm: &spec.HelmSource{Path: "charts/demo", ChartVersion: "2.x"}},
			`charts/demo/Chart.yaml: version 0.1.0 does not match chartVersion "2.x"`},
		{"missing key", spec.Addon{Name: "demo", Helm: &spec.HelmSource{Path: "charts/demo", ValuesFrom: []spec.DataReference{
			{Kind: "ConfigMap", Name: "demo-values", Path: "vars/demo-values.yaml", ValuesKey: "nope"}}}},
			`spec.addons[0].helm.valuesFrom[0].valuesKey: ConfigMap demo-values has no key "nope"`},
		{"missing object", spec.Addon{Name: "demo", Helm: &spec.HelmSource{Path: "charts/demo", ValuesFrom: []spec.DataReference{
			{Kind: "Secret", Name: "demo-values", Path: "vars/demo-values.yaml"}}}},
			`spec.addons[0].helm.valuesFrom[0]: vars/demo-values.yaml has no Secret named demo-values`},
		{"missing file", spec.Addon{Name: "flat", Kustomize: &spec.KustomizeSource{Path: "addons/flat"}, PostBuild: &spec.PostBuild{
			SubstituteFrom: []spec.DataReference{{Kind: "ConfigMap", Name: "x", Path: "vars/nope.yaml"}}}},
			`spec.addons[0].postBuild.substituteFrom[0].path: vars/nope.yaml does not exist`},
		{"values not a map", spec.Addon{Name: "demo", Helm: &spec.HelmSource{Path: "charts/demo", ValuesFrom: []spec.DataReference{
			{Kind: "Secret", Name: "cluster-secrets", Path: "vars/secret.yaml", ValuesKey: "token"}}}},
			`valuesKey: Secret cluster-secrets key "token" is not a YAML map`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := Request{FS: fsys, Profile: withSource(base, c.addon), Cluster: prodCluster()}
			_, err := r.Render(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestExpandVars(t *testing.T) {
	vars := map[string]string{"a": "1", "b": "", "long_name2": "x"}
	for in, want := range map[string]string{
		"${a}":                "1",
		"${b:=d}":             "",
		"${c:=d}":             "d",
		"${c}":                "",
		"$${a}":               "${a}",
		"$a ${a":              "$a ${a",
		"${a.b} ${1x}":        "${a.b} ${1x}",
		"p${long_name2}s${a}": "pxs1",
	} {
		if got := expandVars(in, vars); got != want {
			t.Errorf("expandVars(%q) = %q, want %q", in, got, want)
		}
	}
}

// substituteFrom and valuesFrom read SOPS-encrypted Secret manifests,
// decrypted with the keyring; without one they fail naming the file.
func TestFluxRefsDecryptSOPS(t *testing.T) {
	fsys := sopsRepo(t)
	fsys["addons/vars/cm.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vars}\ndata: {user: \"${username}\", token: \"${token}\"}\n")}
	subst := spec.Addon{Name: "vars", Manifests: &spec.ManifestsSource{Path: "addons/vars"}, PostBuild: &spec.PostBuild{
		SubstituteFrom: []spec.DataReference{{Kind: "Secret", Name: "db", Path: "addons/secrets/secret.yaml"}}}}
	r := New(Options{Keys: testKeyring(t, "age.key")})
	res, err := r.Render(context.Background(), Request{FS: fsys, Profile: sopsProfile(t, fsys, subst), Cluster: prodCluster()})
	if err != nil {
		t.Fatal(err)
	}
	data := res.Steps[0].Objects[0].Object["data"].(map[string]any)
	if data["user"] != "app" || data["token"] != "test-token" {
		t.Errorf("substituted data %v, want the decrypted Secret's username and token", data)
	}
	_, err = New(Options{}).Render(context.Background(), Request{FS: fsys, Profile: sopsProfile(t, fsys, subst), Cluster: prodCluster()})
	if err == nil || !strings.Contains(err.Error(), "addons/secrets/secret.yaml") {
		t.Errorf("without keys: %v, want an error naming the encrypted file", err)
	}
}

// The render cache sees a change to a substituteFrom or valuesFrom file.
func TestFluxRefsInCacheKey(t *testing.T) {
	fsys := memRepo(t)
	fsys["addons/vars/cm.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vars}\ndata: {greeting: \"${greeting}\"}\n")}
	setVars := func(v string) {
		fsys["vars/vars.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vars}\ndata: {greeting: " + v + "}\n")}
	}
	setVars("hello")
	a := spec.Addon{Name: "vars", Manifests: &spec.ManifestsSource{Path: "addons/vars"}, PostBuild: &spec.PostBuild{
		SubstituteFrom: []spec.DataReference{{Kind: "ConfigMap", Name: "vars", Path: "vars/vars.yaml"}}}}
	r := New(Options{})
	greeting := func() any {
		res, err := r.Render(context.Background(), Request{FS: fsys, Profile: withSource(loadProfile(t, fsys, "plain"), a), Cluster: prodCluster()})
		if err != nil {
			t.Fatal(err)
		}
		return res.Steps[0].Objects[0].Object["data"].(map[string]any)["greeting"]
	}
	if g := greeting(); g != "hello" {
		t.Fatalf("greeting %v", g)
	}
	setVars("bonjour")
	if g := greeting(); g != "bonjour" {
		t.Errorf("after the vars file changed: greeting %v, want bonjour (a stale cache entry)", g)
	}
}

// A folder without kustomization.yaml takes the add-on's targetNamespace
// and patches like any kustomization.
func TestGeneratedKustomizationPatches(t *testing.T) {
	fsys := os.DirFS(repoDir)
	a := spec.Addon{Name: "flat", Kustomize: &spec.KustomizeSource{Path: "addons/flat", TargetNamespace: "moved", Patches: []spec.Patch{{
		Patch:  "$patch: delete\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: any}\n",
		Target: &spec.PatchSelector{Kind: "ConfigMap", Name: "script"},
	}}}}
	res, err := New(Options{}).Render(context.Background(), Request{FS: fsys, Profile: withSource(loadProfile(t, fsys, "plain"), a), Cluster: prodCluster()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range res.Objects() {
		names = append(names, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	want := []string{"ConfigMap/moved/vars-${env}", "Service/moved/web-${env}", "Deployment/moved/web"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("objects %v, want %v (script deleted, all in moved)", names, want)
	}
}
