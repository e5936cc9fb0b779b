package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestManagementUserAgent: requests to the management cluster carry the
// user agent the workload clusters see (regatta, regatta/<identity> for a
// shard replica), so that audit logs tell replicas apart there too. A
// recording proxy sits in front of a real management cluster whose Secret
// holds the workload cluster's kubeconfig.
func TestManagementUserAgent(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}}})
	c := env.Cluster("mgmt")
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	_, err := cs.CoreV1().Secrets("default").Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "one-kubeconfig"}, Data: map[string][]byte{"value": c.Kubeconfig()}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agents, proxyURL := recordingProxy(t, c.RESTConfig())
	mgmt := filepath.Join(t.TempDir(), "mgmt.kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: m, cluster: {server: " + proxyURL + "}}]\nusers: [{name: m, user: {}}]\n" +
		"contexts: [{name: m, context: {cluster: m, user: m}}]\ncurrent-context: m\n"
	if err := os.WriteFile(mgmt, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/one/cluster.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: one, labels: {env: prod}}\nspec:\n  kubeconfig: {secretRef: {namespace: default}}\n",
		"profiles/hello.yaml":       "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: hello}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: cm\n    manifests: {path: addons/hello}\n",
		"addons/hello/cm.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ua-hello, namespace: default}\n",
	})
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "fleet")
	d, err := NewDaemon(context.Background(), []string{"--repo", dir, "--management-kubeconfig", mgmt, "--helm-cache-dir", t.TempDir()},
		EmbedOptions{Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if res, err := d.RunOnce(t.Context()); err != nil {
		t.Fatalf("%v: %+v", err, res.Snapshot)
	}
	got := agents()
	if len(got) == 0 {
		t.Fatal("no request reached the management cluster")
	}
	for _, ua := range got {
		if ua != "regatta" {
			t.Errorf("management request with user agent %q, want regatta (all: %q)", ua, got)
			break
		}
	}
	f := &runFlags{shard: shardFlags{mode: replicasShard, identity: "regatta-1"}}
	if ua := f.userAgent("regatta"); ua != "regatta/regatta-1" {
		t.Errorf("shard replica's user agent %q", ua)
	}
}

// recordingProxy serves cfg's API server on plain loopback HTTP, with
// cfg's credentials, and records each request's User-Agent.
func recordingProxy(t *testing.T, cfg *rest.Config) (func() []string, string) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var agents []string
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = tr
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.Header.Get("User-Agent"))
		mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), agents...)
	}, srv.URL
}
