package apply_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

// TestClientsShareOneRateLimiter: the QPS and burst bound a cluster, not
// each of its clients. Requests through the discovery, dynamic and typed
// clients and an impersonating client's all take their token from one
// bucket, which refills too slowly to count here: what is left of it is
// its burst less every request the server saw. client-go gives each REST
// client a bucket of its own.
func TestClientsShareOneRateLimiter(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		http.NotFound(w, nil)
	}))
	t.Cleanup(srv.Close)
	opts := apply.DefaultClientOptions()
	opts.QPS, opts.Burst = 0.0001, 100
	c, err := apply.NewClientForConfig("c", &rest.Config{Host: srv.URL}, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, _ = c.Discovery.ServerVersion()
	_, _ = c.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("a").Get(ctx, "b", metav1.GetOptions{})
	_ = c.Kube.Get(ctx, client.ObjectKey{Namespace: "a", Name: "b"}, &corev1.Secret{})
	as, err := c.As("tenant")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = as.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("a").Get(ctx, "b", metav1.GetOptions{})
	left := 0
	for c.LimiterAccepts() {
		left++
	}
	if n := served.Load(); n < 4 || int64(left) != 100-n {
		t.Errorf("%d requests left %d of 100 tokens, want %d", n, left, 100-n)
	}

	opts.Burst = 1
	c, err = apply.NewClientForConfig("d", &rest.Config{Host: srv.URL}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if as, err = c.As("tenant"); err != nil {
		t.Fatal(err)
	}
	if !c.LimiterAccepts() || as.LimiterAccepts() {
		t.Error("an impersonating client has a bucket of its own")
	}
}
