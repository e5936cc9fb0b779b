package sveltos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/spec"
)

// importCorpus imports files of testdata/corpus (examples of Sveltos'
// documentation, see its README) into a new folder, as `regatta import
// sveltos` does, and returns the fleet's folder and the report's lines.
func importCorpus(t *testing.T, source string, files ...string) (string, string) {
	t.Helper()
	out := t.TempDir()
	for i, f := range files {
		files[i] = "testdata/corpus/" + f
	}
	res, err := Run(context.Background(), Options{Files: files, Source: source, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range res.Report.Findings() {
		lines = append(lines, f.String())
	}
	return out, strings.Join(lines, "\n")
}

func wantFindings(t *testing.T, all string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("report lacks %q:\n%s", w, all)
		}
	}
}

// TestCorpusTemplatedValuesRefuseChart: calico's values in Sveltos' docs
// hold a templated ipPools list; the chart is refused with the reason,
// not installed with default values.
func TestCorpusTemplatedValuesRefuseChart(t *testing.T) {
	out, all := importCorpus(t, "", "calico.yaml")
	wantFindings(t, all,
		`testdata/corpus/calico.yaml:18: spec.helmCharts[0].values: a Sveltos template (3 templated lines, the first: "{{ range $cidr := .Cluster.spec.clusterNetwork.pods.cidrBlocks }}") is not carried over`,
		"testdata/corpus/calico.yaml:11: spec.helmCharts[0]: chart tigera-operator (release calico) not carried over: its values could not be",
		"testdata/corpus/calico.yaml:6: spec: nothing to deploy was carried over: profile deploy-calico not written",
	)
	repo, _ := spec.Load(os.DirFS(out))
	if len(repo.Profiles) != 0 {
		t.Errorf("profiles written: %+v", repo.Profiles[0].Spec.Addons)
	}
}

// TestCorpusTemplateAnnotationAnyValue: Sveltos' docs mark templates
// with projectsveltos.io/template: ok; the import reports them whatever
// the value, and the validation of the written fleet (the checks of
// `regatta validate`) reports the templated file regatta refuses.
func TestCorpusTemplateAnnotationAnyValue(t *testing.T) {
	_, all := importCorpus(t, "", "external-secret.yaml")
	wantFindings(t, all,
		`testdata/corpus/external-secret.yaml:27: metadata.annotations: a Sveltos template (projectsveltos.io/template: "ok"; Sveltos reads any value as true) is carried over as it is`,
		"sveltos-policies/secret/default/info/secret.yaml:1: the imported fleet is invalid here: ",
	)
}

// TestCorpusLuaPolicy: a ConfigMap of Lua (projectsveltos.io/lua) is not
// written out as manifests: the report says why and what to do.
func TestCorpusLuaPolicy(t *testing.T) {
	_, all := importCorpus(t, "", "lua.yaml")
	wantFindings(t, all, "testdata/corpus/lua.yaml:4: metadata.annotations: a Sveltos Lua policy (projectsveltos.io/lua): its Lua generates the resources at deploy time")
	if strings.Contains(all, "invalid here") {
		t.Errorf("the Lua was written as manifests:\n%s", all)
	}
}

// TestSourceCheckoutKeptApart: --source is a checkout of a Flux
// repository (d1-fleet, of the Flux importer's corpus) with its own
// clusters/ and tenants/; copied into the fleet's root they were read as
// the fleet's clusters and tenants, and the fleet was invalid. Copied
// into sveltos-source/, the fleet validates and the refs name it.
func TestSourceCheckoutKeptApart(t *testing.T) {
	dir := t.TempDir()
	profile := `apiVersion: config.projectsveltos.io/v1beta1
kind: ClusterProfile
metadata: {name: infra-update}
spec:
  clusterSelector: {matchLabels: {env: fv}}
  kustomizationRefs:
  - {kind: GitRepository, name: d1-fleet, namespace: flux-system, path: ./tenants/infra/update}
`
	if err := os.WriteFile(filepath.Join(dir, "profile.yaml"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Files: []string{filepath.Join(dir, "profile.yaml")}, Source: "../flux/testdata/corpus/d1-fleet", Out: out})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Report.Findings() {
		if strings.Contains(f.Message, "invalid here") {
			t.Errorf("the fleet is invalid: %s", f)
		}
	}
	repo, diags := spec.Load(os.DirFS(out))
	if len(diags.Errors()) > 0 || len(repo.Profiles) != 1 {
		t.Fatalf("fleet: %d profiles, %v", len(repo.Profiles), diags.Errors())
	}
	if got := repo.Profiles[0].Spec.Addons[0].Kustomize.Path; got != "sveltos-source/tenants/infra/update" {
		t.Errorf("kustomize path %q", got)
	}
	if _, err := os.Stat(filepath.Join(out, "sveltos-source/clusters/staging/infra-tenant.yaml")); err != nil {
		t.Error(err)
	}
}

// TestCorpusEventTrigger: Sveltos' service event trigger example becomes
// events/https-service.yaml and an event profile whose templated policy
// reads regatta's event data; the fleet validates. (cmd/regatta/app's
// TestImportSveltosEventRenders renders it with event resources.)
func TestCorpusEventTrigger(t *testing.T) {
	out, all := importCorpus(t, "", "service-event-trigger.yaml")
	if strings.Contains(all, "not a kind the Sveltos import reads") || strings.Contains(all, "invalid here") {
		t.Fatalf("report:\n%s", all)
	}
	wantFindings(t, all, "testdata/corpus/service-event-trigger.yaml:49: data.ingress.yaml: a Sveltos event template, carried over as a regatta template (template: true)")
	repo, diags := spec.Load(os.DirFS(out))
	if len(diags.Errors()) > 0 || len(repo.Profiles) != 1 || len(repo.EventSources) != 1 {
		t.Fatalf("fleet: %d profiles, %d event sources, %v", len(repo.Profiles), len(repo.EventSources), diags.Errors())
	}
	es := repo.EventSources[0]
	if es.Metadata.Name != "https-service" || len(es.Spec.ResourceSelectors) != 1 || es.Spec.ResourceSelectors[0].Namespace != "eng" ||
		!strings.Contains(es.Spec.ResourceSelectors[0].Evaluate, "p.port == 443") {
		t.Errorf("event source %+v", es.Spec)
	}
	p := repo.Profiles[0]
	et := p.Spec.EventTrigger
	if p.Metadata.Name != "ingress-configuration" || et == nil || et.EventSourceName != "https-service" || et.OneForEvent ||
		et.SourceClusterSelector == nil || et.SourceClusterSelector.MatchLabels["env"] != "fv" {
		t.Fatalf("profile %+v", p.Spec)
	}
	a := p.Spec.Addons[0]
	if !a.Template || a.Manifests == nil || a.Manifests.Path != "sveltos-policies/events/configmap/default/ingress" {
		t.Errorf("add-on %+v", a)
	}
	ingress, err := os.ReadFile(filepath.Join(out, a.Manifests.Path, "ingress.yaml"))
	if err != nil || !strings.Contains(string(ingress), "{{ range $resource := .Event.Resources }}") {
		t.Errorf("ingress.yaml (%v):\n%s", err, ingress)
	}
}

// TestCorpusEventTemplateWithoutAnnotation: Sveltos instantiates an
// EventTrigger's policies without projectsveltos.io/template (its
// auto-deploy-postgres-cluster example); the import templates them too,
// so the fleet validates instead of failing on `{{` as YAML.
func TestCorpusEventTemplateWithoutAnnotation(t *testing.T) {
	out, all := importCorpus(t, "", "auto-deploy-postgres-cluster.yaml")
	if strings.Contains(all, "invalid here") {
		t.Fatalf("report:\n%s", all)
	}
	wantFindings(t, all, "testdata/corpus/auto-deploy-postgres-cluster.yaml:39: data.cluster.yaml: a Sveltos event template, carried over as a regatta template (template: true)")
	repo, diags := spec.Load(os.DirFS(out))
	if len(diags.Errors()) > 0 || len(repo.Profiles) != 1 || !repo.Profiles[0].Spec.Addons[0].Template {
		t.Fatalf("fleet: %v %+v", diags.Errors(), repo.Profiles)
	}
	et := repo.Profiles[0].Spec.EventTrigger
	if !et.OneForEvent || et.DestinationClusterSelector == nil || et.DestinationClusterSelector.MatchLabels["type"] != "services" {
		t.Errorf("eventTrigger %+v", et)
	}
	data, err := os.ReadFile(filepath.Join(out, "sveltos-policies/events/configmap/default/postgres-cluster/cluster.yaml"))
	if err != nil || !strings.Contains(string(data), "name: cluster-{{ .Event.Resource.metadata.name }}") {
		t.Errorf("cluster.yaml (%v):\n%s", err, data)
	}
}
