package spec

import (
	"strings"
	"testing"
	"testing/fstest"
)

const nsEventSource = `apiVersion: regatta.dev/v1alpha1
kind: EventSource
metadata:
  name: svc
spec:
  resourceSelectors:
  - version: v1
    kind: Service
`

// TestCreateNamespace: helm.createNamespace is read (default false), is
// refused in an event profile and warned about on a namespace every
// cluster has; a misspelt key is an error of the strict loading.
func TestCreateNamespace(t *testing.T) {
	helm := func(extra string) string {
		return strings.Replace(msgProfile, "    manifests:\n      path: m\n",
			"    helm:\n      repositoryURL: https://charts.example.com/\n      chartName: x\n      chartVersion: 1.0.0\n"+extra, 1)
	}
	event := strings.Replace(helm("      releaseNamespace: web\n      createNamespace: true\n"),
		"  clusterSelector:", "  eventTrigger: {eventSourceName: svc, oneForEvent: true}\n  clusterSelector:", 1)
	cases := []struct {
		name, profile string
		create        bool
		errs, warns   string
	}{
		{name: "default false", profile: helm("      releaseNamespace: web\n")},
		{name: "set", profile: helm("      releaseNamespace: web\n      createNamespace: true\n"), create: true},
		{name: "preset namespace", profile: helm("      createNamespace: true\n"), create: true,
			warns: "warning: profiles/p.yaml:13: spec.addons[0].helm.createNamespace: namespace default exists on every cluster: nothing to create (set releaseNamespace)\n"},
		{name: "event profile", profile: event, create: true,
			errs: "profiles/p.yaml:15: spec.addons[0].helm.createNamespace: not supported in an event profile (every instance would create namespace web): create it in a profile of its own\n"},
		{name: "misspelt", profile: helm("      releaseNamespace: web\n      createNamespaces: true\n"),
			errs: "profiles/p.yaml:14: spec.addons[0].helm.createNamespaces: unknown field \"createNamespaces\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo, diags := Load(fstest.MapFS{
				"clusters/c1/cluster.yaml": {Data: []byte(msgCluster)},
				"events/svc.yaml":          {Data: []byte(nsEventSource)},
				"profiles/p.yaml":          {Data: []byte(tc.profile)},
			})
			if got := formatDiags(diags.Errors()); !strings.HasPrefix(got, tc.errs) || (tc.errs == "") != (got == "") {
				t.Fatalf("errors:\n%s\nwant:\n%s", got, tc.errs)
			}
			if tc.errs != "" {
				return
			}
			if got := formatDiags(diags.Warnings()); got != tc.warns {
				t.Errorf("warnings:\n%s\nwant:\n%s", got, tc.warns)
			}
			if h := repo.Profile("p").Spec.Addons[0].Helm; h.CreateNamespace != tc.create {
				t.Errorf("createNamespace %v, want %v", h.CreateNamespace, tc.create)
			}
		})
	}
}

func TestKeptWhileNotEmpty(t *testing.T) {
	for _, tc := range []struct {
		ann  map[string]string
		want bool
	}{
		{map[string]string{AnnotationCreatedNamespace: "true"}, true},
		{map[string]string{AnnotationCreatedNamespace: "true", AnnotationPruneContents: PruneContentsEnabled}, false},
		{map[string]string{AnnotationCreatedNamespace: "true", AnnotationPruneContents: "disabled"}, true},
		{map[string]string{AnnotationCreatedNamespace: "false"}, false},
		{nil, false},
	} {
		if got := KeptWhileNotEmpty(tc.ann); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.ann, got, tc.want)
		}
	}
}
