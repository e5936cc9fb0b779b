package helm

import (
	"context"
	"strings"
	"testing"
)

func TestCapabilities(t *testing.T) {
	srv := newRepoServer(t)
	r := newTestRenderer(t)
	cases := []struct {
		name, kube     string
		apis           []string
		generation     string
		policyV1       string
		serviceMonitor bool
	}{
		{"new cluster with prometheus-operator", "v1.37.2", []string{"v1", "apps/v1", "policy/v1", "monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor"}, "modern", "true", true},
		{"old cluster without", "v1.26.3", []string{"v1", "apps/v1"}, "legacy", "false", false},
		{"defaults when no API versions are given", "v1.31.0", nil, "modern", "true", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := appRequest(srv.URL)
			req.KubeVersion, req.APIVersions = c.kube, c.apis
			res, err := r.Render(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			objs := all(res.Steps)
			data := find(objs, "ConfigMap", "shop-fleet-app-capabilities").Object["data"].(map[string]any)
			if data["generation"] != c.generation || data["kubeVersion"] != c.kube || data["policyV1"] != c.policyV1 {
				t.Errorf("capabilities data %v", data)
			}
			if got := find(objs, "ServiceMonitor", "shop-fleet-app") != nil; got != c.serviceMonitor {
				t.Errorf("ServiceMonitor rendered = %v, want %v", got, c.serviceMonitor)
			}
		})
	}
}

func TestKubeVersionConstraint(t *testing.T) {
	srv := newRepoServer(t)
	req := appRequest(srv.URL)
	req.KubeVersion = "v1.20.4"
	_, err := newTestRenderer(t).Render(context.Background(), req)
	want := "chart fleet-app 1.2.0: chart requires kubeVersion >=1.25.0-0, the cluster runs v1.20.4"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	req.KubeVersion = "not-a-version"
	if _, err := newTestRenderer(t).Render(context.Background(), req); err == nil || !strings.Contains(err.Error(), `kubernetes version "not-a-version"`) {
		t.Fatalf("got %v", err)
	}
}
