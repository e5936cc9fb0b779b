package flux

import (
	"context"
	"os"
	"strings"
	"testing"
)

// importCorpus imports a repository of testdata/corpus (files of public
// Flux repositories, see its README) and returns the report's lines.
func importCorpus(t *testing.T, name string) string {
	t.Helper()
	_, report, err := Import(context.Background(), os.DirFS("testdata/corpus/"+name), Pull{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	return findingsOf(report)
}

func wantFindings(t *testing.T, all string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("report lacks %q:\n%s", w, all)
		}
	}
}

// TestCorpusD1FleetLeftOut: d1-fleet's infra tenant (controlplaneio-fluxcd/d1-fleet)
// builds an ImageUpdateAutomation, which the kustomize add-on's
// $patch: delete leaves out: the report names it. Its ServiceAccount
// lands in flux-system, which nothing in the fleet creates: the report
// warns that a cluster without Flux refuses it.
func TestCorpusD1FleetLeftOut(t *testing.T) {
	all := importCorpus(t, "d1-fleet")
	wantFindings(t, all,
		"tenants/infra/update/automation.yaml:1: ImageUpdateAutomation flux-infra (image.toolkit.fluxcd.io/v1) is left out of the add-on (a $patch: delete patch) and not carried over: regatta has no image automation",
		"tenants/infra/components/rbac.yaml:1: ServiceAccount flux-infra is placed in namespace flux-system, which Flux's installation created and the import does not carry over: "+
			`on cluster staging without Flux it fails with namespaces "flux-system" not found`,
	)
	if strings.Contains(all, "ClusterRoleBinding flux-infra is placed") {
		t.Errorf("a cluster-scoped object was reported as placed in flux-system:\n%s", all)
	}
}

// TestCorpusGitopsIstioSubstitutedVersion: gitops-istio
// (stefanprodan/gitops-istio) sets its Istio charts' version with
// ${version} from the ConfigMap istio-version; the import writes the
// version it has now, and says so for each release.
func TestCorpusGitopsIstioSubstitutedVersion(t *testing.T) {
	all := importCorpus(t, "gitops-istio")
	for _, line := range []string{"27", "47", "82"} {
		wantFindings(t, all, "istio/system/istio.yaml:"+line+`: spec.chart.spec.version: ${version} is a Flux substitution (postBuild of Kustomization istio-system): `+
			`written as the fixed chartVersion "1.19.3" it has now, so changing the variable no longer changes this release`)
	}
	wantFindings(t, all, `istio/system/istio.yaml:96: spec.values.service.type: ${service:=LoadBalancer} is a Flux substitution`)
}
