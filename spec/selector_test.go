package spec

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func TestProfileMatches(t *testing.T) {
	repo, diags := loadDir(t, "testdata/valid-full")
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		profile, cluster string
		labels           map[string]string
		want             bool
	}{
		{"kyverno", "prod-eu-1", map[string]string{"env": "prod"}, true},
		{"kyverno", "dev-1", map[string]string{"env": "dev"}, false},
		{"kyverno", "staging-1", map[string]string{"env": "staging"}, true}, // clusterRefs
		{"cert-manager", "x", map[string]string{"env": "staging"}, true},
		{"cert-manager", "x", map[string]string{"env": "qa"}, false},
		{"cert-manager", "x", nil, false},
	}
	for _, tt := range tests {
		if got := repo.Profile(tt.profile).Matches(tt.cluster, tt.labels); got != tt.want {
			t.Errorf("%s.Matches(%s, %v) = %v, want %v", tt.profile, tt.cluster, tt.labels, got, tt.want)
		}
	}
}

func TestEmptySelectorMatchesNothing(t *testing.T) {
	sel, err := LabelSelector{}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if sel.Matches(labels.Set{"env": "prod"}) || sel.Matches(labels.Set{}) {
		t.Errorf("empty selector %q matched", sel)
	}
}

func TestDefaults(t *testing.T) {
	repo, _ := loadDir(t, "testdata/valid-full")
	ref := repo.Cluster("staging-1").Spec.Kubeconfig.SecretRef
	if ref != (SecretKeyRef{Name: "staging-1-kubeconfig", Namespace: DefaultKubeconfigNamespace, Key: "value"}) {
		t.Errorf("defaulted secretRef = %+v", ref)
	}
	if files := repo.Cluster("prod-eu-1").Files; len(files) != 1 || files[0] != "clusters/prod-eu-1/kubeconfig.yaml" {
		t.Errorf("cluster files = %v", files)
	}
	p := repo.Profile("cert-manager")
	if p.Spec.SyncMode != SyncModeContinuous || p.Spec.StopMatchingBehavior != StopMatchingWithdrawPolicies || p.Tier() != 50 {
		t.Errorf("profile defaults: %+v tier %d", p.Spec, p.Tier())
	}
	if h := p.Spec.Addons[0].Helm; h.ReleaseName != "cert-manager" {
		t.Errorf("releaseName default = %q", h.ReleaseName)
	}
	if repo.Profile("kyverno").Tier() != DefaultTier {
		t.Errorf("default tier = %d", repo.Profile("kyverno").Tier())
	}
	if v := repo.Cluster("prod-eu-1").Spec.Values["replicas"]; v != int64(3) {
		t.Errorf("values.replicas = %#v, want int64(3)", v)
	}
}
