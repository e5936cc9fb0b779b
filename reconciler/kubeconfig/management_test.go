package kubeconfig

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestManagementSecretsNotThrottled: the management client reads a
// kubeconfig Secret per cluster and reconciliation, so it must not keep
// client-go's default 5 QPS (which made 1,000 clusters wait 200 s for
// their Secrets); a configuration with limits of its own keeps them. The
// getter reads a real Secret.
func TestManagementSecretsNotThrottled(t *testing.T) {
	cfg := env.Cluster("renew").RESTConfig()
	cs, err := managementClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if qps := cs.CoreV1().RESTClient().GetRateLimiter().QPS(); qps < ManagementQPS {
		t.Errorf("management client at %v QPS, want %v", qps, float32(ManagementQPS))
	}
	if cfg.QPS != 0 {
		t.Errorf("the caller's configuration was changed: QPS %v", cfg.QPS)
	}
	own := env.Cluster("renew").RESTConfig()
	own.QPS, own.Burst = 7, 9
	if cs, err = managementClient(own); err != nil {
		t.Fatal(err)
	}
	if qps := cs.CoreV1().RESTClient().GetRateLimiter().QPS(); qps != 7 {
		t.Errorf("a configuration's own QPS 7 became %v", qps)
	}
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "mgmt-kubeconfig", Namespace: "default"}, Data: map[string][]byte{"value": []byte("kc")}}
	if _, err := admin.CoreV1().Secrets("default").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	get, err := ManagementSecrets(cfg)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := get(ctx, "default", "mgmt-kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := FromSecret(obj, "value"); err != nil || string(b) != "kc" {
		t.Errorf("FromSecret = %q, %v; want kc", b, err)
	}
	if g, err := ManagementSecrets(nil); g != nil || err != nil {
		t.Errorf("ManagementSecrets(nil) = %v, %v; want nil, nil", g != nil, err)
	}
}
