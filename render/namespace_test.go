package render

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/spec"
)

// nsChart is a chart whose templates set no namespace, as charts made with
// `helm create` often do.
var nsChart = map[string]string{
	"charts/nons/Chart.yaml":  "apiVersion: v2\nname: nons\nversion: 0.1.0\n",
	"charts/nons/values.yaml": "{}\n",
	"charts/nons/templates/objects.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .Release.Name }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .Release.Name }}-reader
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: pinned
  namespace: elsewhere
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: globals.example.com
spec:
  group: example.com
  scope: Cluster
  names: {kind: Global, plural: globals}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
---
apiVersion: example.com/v1
kind: Global
metadata:
  name: one
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: locals.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Local, plural: locals}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
---
apiVersion: example.com/v1
kind: Local
metadata:
  name: two
---
apiVersion: example.org/v1
kind: Widget
metadata:
  name: custom
`,
	"plain/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n" +
		"---\napiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: restricted}\nspec: {}\n" +
		"---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: pdb}\n",
	"kust/kustomization.yaml": "resources: [cm.yaml]\n",
	"kust/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kust}\n",
}

func nsRepo(t *testing.T) fstest.MapFS {
	fsys := memRepo(t)
	for name, data := range nsChart {
		fsys[name] = &fstest.MapFile{Data: []byte(data), Mode: 0o644}
	}
	return fsys
}

// TestNamespacesDefaulted: namespaced objects without a namespace land in
// the Helm release namespace (as helm install and Flux put them) or in
// "default" (as kubectl does); cluster-scoped objects (also kinds older
// clusters served, as PodSecurityPolicy), those of kinds a
// CRD in the render declares cluster-scoped, and objects with a namespace
// of their own are left as they are. A custom kind without its CRD in the
// render is left to the apply engine, with the step's Namespace.
func TestNamespacesDefaulted(t *testing.T) {
	fsys := nsRepo(t)
	prof := withSource(loadProfile(t, fsys, "plain"), spec.Addon{Name: "chart", Helm: &spec.HelmSource{
		Path: "charts/nons", ReleaseName: "web", ReleaseNamespace: "team-a"}})
	prof.Spec.Addons = append(prof.Spec.Addons,
		spec.Addon{Name: "nsless", Helm: &spec.HelmSource{Path: "charts/nons", ReleaseName: "other"}},
		spec.Addon{Name: "plain", Manifests: &spec.ManifestsSource{Path: "plain"}},
		spec.Addon{Name: "kust", Kustomize: &spec.KustomizeSource{Path: "kust"}},
		spec.Addon{Name: "kust-target", Kustomize: &spec.KustomizeSource{Path: "kust", TargetNamespace: "team-b"}},
	)
	res, err := New(Options{Helm: helmRenderer(t)}).Render(context.Background(), Request{FS: fsys, Revision: "r", Profile: prof, Cluster: prodCluster()})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range res.Steps {
		for _, o := range s.Objects {
			got[s.Addon+" "+o.GetKind()+" "+o.GetName()] = o.GetNamespace()
		}
	}
	want := map[string]string{
		"chart ConfigMap web-settings":                        "team-a",
		"chart ServiceAccount web":                            "team-a",
		"chart ClusterRole web-reader":                        "",
		"chart ConfigMap pinned":                              "elsewhere",
		"chart CustomResourceDefinition globals.example.com":  "",
		"chart Global one":                                    "",
		"chart CustomResourceDefinition locals.example.com":   "",
		"chart Local two":                                     "team-a",
		"chart Widget custom":                                 "",
		"nsless ConfigMap other-settings":                     "default",
		"nsless ServiceAccount other":                         "default",
		"nsless ClusterRole other-reader":                     "",
		"nsless ConfigMap pinned":                             "elsewhere",
		"nsless CustomResourceDefinition globals.example.com": "",
		"nsless Global one":                                   "",
		"nsless CustomResourceDefinition locals.example.com":  "",
		"nsless Local two":                                    "default",
		"nsless Widget custom":                                "",
		"plain ConfigMap plain":                               "default",
		"plain Namespace team-a":                              "",
		"plain PodSecurityPolicy restricted":                  "",
		"plain PodDisruptionBudget pdb":                       "default",
		"kust ConfigMap kust":                                 "default",
		"kust-target ConfigMap kust":                          "team-b",
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: namespace %q (found %v), want %q", k, g, ok, w)
		}
	}
	for _, s := range res.Steps {
		if w := map[string]string{"chart": "team-a", "kust-target": "team-b"}[s.Addon]; s.Namespace != w && (w != "" || s.Namespace != DefaultNamespace) {
			t.Errorf("step %s: Namespace %q", s.Addon, s.Namespace)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d objects, want %d: %v", len(got), len(want), got)
	}
}

// TestNamespacesDefaultedOnCopies: defaulting never changes the objects a
// step held before (the render cache shares them).
func TestNamespacesDefaultedOnCopies(t *testing.T) {
	fsys := nsRepo(t)
	prof := withSource(loadProfile(t, fsys, "plain"), spec.Addon{Name: "plain", Manifests: &spec.ManifestsSource{Path: "plain"}})
	r := New(Options{})
	objs, err := r.Render(context.Background(), Request{FS: fsys, Revision: "r", Profile: prof, Cluster: prodCluster()})
	if err != nil {
		t.Fatal(err)
	}
	orig := objs.Steps[0].Objects[0]
	orig.SetNamespace("")
	steps := []Step{{Addon: "plain", Objects: []Object{orig}}}
	defaultNamespaces(steps, nil)
	if orig.GetNamespace() != "" || steps[0].Objects[0].GetNamespace() != DefaultNamespace || steps[0].Objects[0].Source != orig.Source {
		t.Errorf("original %q, step %q", orig.GetNamespace(), steps[0].Objects[0].GetNamespace())
	}
}

// TestCreateNamespace: helm.createNamespace renders the release namespace,
// marked as created, in a step of its own before the chart's pre hooks;
// a namespace the profile declares, or that an earlier add-on creates,
// is not rendered twice; without createNamespace nothing is added.
func TestCreateNamespace(t *testing.T) {
	fsys := nsRepo(t)
	chart := func(release, ns string, create bool) *spec.HelmSource {
		return &spec.HelmSource{Path: "charts/demo", ReleaseName: release, ReleaseNamespace: ns, CreateNamespace: create}
	}
	prof := withSource(loadProfile(t, fsys, "plain"), spec.Addon{Name: "demo", Helm: chart("demo", "demo-ns", true)})
	prof.Spec.Addons = append(prof.Spec.Addons,
		spec.Addon{Name: "again", Helm: chart("again", "demo-ns", true)},
		spec.Addon{Name: "plain", Manifests: &spec.ManifestsSource{Path: "plain"}},
		spec.Addon{Name: "declared", Helm: chart("declared", "team-a", true)},
		spec.Addon{Name: "off", Helm: chart("off", "off-ns", false)},
		spec.Addon{Name: "preset", Helm: chart("preset", "kube-system", true)},
	)
	r := New(Options{Helm: helmRenderer(t)})
	for range 2 { // the second render is a cache hit
		res, err := r.Render(context.Background(), Request{FS: fsys, Revision: "r", Profile: prof, Cluster: prodCluster()})
		if err != nil {
			t.Fatal(err)
		}
		var namespaces []string
		for i, s := range res.Steps {
			for _, o := range s.Objects {
				if o.GetKind() == "Namespace" {
					namespaces = append(namespaces, fmt.Sprintf("%s/%s/%s %s", s.Addon, s.Phase, o.GetName(), o.GetAnnotations()[spec.AnnotationCreatedNamespace]))
				}
			}
			if s.Phase == PhaseNamespace && (i == len(res.Steps)-1 || res.Steps[i+1].Phase != PhasePre) {
				t.Errorf("step %d (%s): the namespace step is not followed by the chart's pre hooks", i, s.Addon)
			}
		}
		want := []string{"demo/namespace/demo-ns true", "plain/main/team-a "}
		if !slices.Equal(namespaces, want) {
			t.Errorf("namespaces %q, want %q", namespaces, want)
		}
		if s := res.Steps[0]; s.Addon != "demo" || s.Phase != PhaseNamespace || s.Objects[0].Source != "profiles/plain.yaml (spec.addons[0].helm.createNamespace)" {
			t.Errorf("first step %s %s, source %q", s.Addon, s.Phase, s.Objects[0].Source)
		}
	}
}

// TestCreateNamespaceOverlayPatch: an overlay's patches apply to the
// created Namespace too (how a profile opts in to pruning it with its
// contents from Git).
func TestCreateNamespaceOverlayPatch(t *testing.T) {
	fsys := nsRepo(t)
	prof := withSource(loadProfile(t, fsys, "plain"), spec.Addon{Name: "demo", Helm: &spec.HelmSource{
		Path: "charts/demo", ReleaseName: "demo", ReleaseNamespace: "demo-ns", CreateNamespace: true}})
	prof.Spec.Overlays = []spec.Overlay{{
		ClusterSelector: spec.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
		Addon:           "demo",
		Patches: []spec.Patch{{
			Target: &spec.PatchSelector{Kind: "Namespace"},
			Patch:  "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo-ns\n  annotations:\n    " + spec.AnnotationPruneContents + ": " + spec.PruneContentsEnabled + "\n",
		}},
	}}
	res, err := New(Options{Helm: helmRenderer(t)}).Render(context.Background(), Request{FS: fsys, Revision: "r", Profile: prof, Cluster: prodCluster()})
	if err != nil {
		t.Fatal(err)
	}
	ns := res.Steps[0].Objects[0]
	if a := ns.GetAnnotations(); ns.GetKind() != "Namespace" || a[spec.AnnotationPruneContents] != spec.PruneContentsEnabled || a[spec.AnnotationCreatedNamespace] != "true" {
		t.Errorf("first object %s %s, annotations %v", ns.GetKind(), ns.GetName(), a)
	}
}
