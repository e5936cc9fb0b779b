package sveltos

import (
	"context"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/migrate"
)

// helmCharts get createNamespace as Sveltos defaults it: true unless
// options.installOptions.createNamespace says false; not for a namespace
// every cluster has. The report says what the import did.
func TestCreateNamespace(t *testing.T) {
	data, err := os.ReadFile("testdata/create-namespace.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := migrate.ParseDocs("create-namespace.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	report := &migrate.Report{}
	fleet := Import(context.Background(), docs, nil, report)
	if len(fleet.Profiles) != 1 {
		t.Fatalf("%d profiles", len(fleet.Profiles))
	}
	got := map[string]bool{}
	for _, a := range fleet.Profiles[0].Spec.Addons {
		got[a.Helm.ReleaseNamespace] = a.Helm.CreateNamespace
	}
	if want := map[string]bool{"kyverno": true, "policies": false, "kube-system": false}; !maps.Equal(got, want) {
		t.Errorf("createNamespace by namespace %v, want %v", got, want)
	}
	var lines []string
	for _, f := range report.Findings() {
		lines = append(lines, f.String())
	}
	want := []string{
		"create-namespace.yaml:9: spec.helmCharts[0].options.installOptions.createNamespace: carried over as helm.createNamespace: true (Sveltos' default): " +
			"regatta creates namespace kyverno when it is missing, and deletes it with the add-on only if regatta created it and nothing else is in it",
		"create-namespace.yaml:25: spec.helmCharts[1].options.installOptions.createNamespace: false carried over: namespace policies must exist before the chart (deploy it in an earlier add-on or profile)",
		"create-namespace.yaml:26: spec.helmCharts[1].options.installOptions.replace: not carried over",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("report:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
