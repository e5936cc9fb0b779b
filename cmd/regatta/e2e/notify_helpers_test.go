package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// hookInbox is a generic webhook destination on loopback that can be
// down (it answers 503) and checks the HMAC-SHA256 signature regatta's
// webhook sends (X-Regatta-Signature: sha256=<hex>) when given a key.
type hookInbox struct {
	*httptest.Server
	mu       sync.Mutex
	down     bool
	key      []byte
	requests int // every request, the refused ones too
	msgs     []map[string]any
}

func newHookInbox(t *testing.T) *hookInbox {
	in := &hookInbox{}
	in.Server = httptest.NewServer(http.HandlerFunc(in.serve))
	t.Cleanup(in.Close)
	return in
}

func (in *hookInbox) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	in.mu.Lock()
	defer in.mu.Unlock()
	in.requests++
	if in.down {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	if in.key != nil {
		mac := hmac.New(sha256.New, in.key)
		mac.Write(body)
		if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); !hmac.Equal([]byte(r.Header.Get("X-Regatta-Signature")), []byte(want)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	in.msgs = append(in.msgs, m)
}

// set changes whether the inbox is down and the key it checks.
func (in *hookInbox) set(down bool, key []byte) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.down, in.key = down, key
}

func (in *hookInbox) messages() []map[string]any {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]map[string]any(nil), in.msgs...)
}

func (in *hookInbox) requestCount() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.requests
}

// notifyEnv is a management cluster holding the fleet clusters'
// kubeconfig Secrets, the fleet's clients, a fleet repository and an
// inbox, for the notification scenarios.
type notifyEnv struct {
	env     *testenv.Env
	mgmt    kubernetes.Interface
	clients map[string]kubernetes.Interface
	inbox   *hookInbox
	repo    repoDirs
	dir     string
}

// startNotifyEnv starts mgmt and the named clusters, stores their
// kubeconfig Secrets and the Secret ops-hook (the inbox's address) in
// regatta-system.
func startNotifyEnv(t *testing.T, clusters ...string) *notifyEnv {
	t.Helper()
	opts := testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}}}
	for _, c := range clusters {
		opts.Clusters = append(opts.Clusters, testenv.ClusterOptions{Name: c})
	}
	e := &notifyEnv{env: testenv.StartT(t, opts), clients: map[string]kubernetes.Interface{}, inbox: newHookInbox(t), repo: newRepo(t), dir: t.TempDir()}
	var err error
	if e.mgmt, err = kubernetes.NewForConfig(e.env.Cluster("mgmt").RESTConfig()); err != nil {
		t.Fatal(err)
	}
	for _, c := range clusters {
		kubeconfigSecret(t, e.mgmt, e.env.Cluster(c))
		if e.clients[c], err = kubernetes.NewForConfig(e.env.Cluster(c).RESTConfig()); err != nil {
			t.Fatal(err)
		}
	}
	hook := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ops-hook", Namespace: "regatta-system"},
		Data: map[string][]byte{"address": []byte(e.inbox.URL + "/hook")}}
	if _, err := e.mgmt.CoreV1().Secrets("regatta-system").Create(context.Background(), hook, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return e
}

// args are a daemon's flags on the environment: quick passes and status
// commits, a 2s group wait, the inbox allowed by the URL policy.
func (e *notifyEnv) args(t *testing.T, extra ...string) []string {
	return append([]string{"--repo", e.repo.bare, "--management-kubeconfig", mgmtKubeconfig(t, e.dir, e.env.Cluster("mgmt")),
		"--interval", "500ms", "--status-interval", "1s", "--health-timeout", "10s", "--notify-group-wait", "2s",
		"--allow-url-prefix", e.inbox.URL + "/"}, extra...)
}

// configMap is data.v of a ConfigMap on a cluster, "" when absent.
func (e *notifyEnv) configMap(t *testing.T, cluster, namespace, name string) string {
	t.Helper()
	cm, err := e.clients[cluster].CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data["v"]
}

// notifyClusters are the cluster folders of the clusters named as keys,
// each labelled env: prod and its value's labels (", stage: canary").
func notifyClusters(labels map[string]string) map[string]string {
	out := map[string]string{}
	for c, l := range labels {
		out["clusters/"+c+"/cluster.yaml"] = "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: " + c + "\n  labels: {env: prod" + l + "}\n"
	}
	return out
}

// cmProfile is a profile of one ConfigMap name (data.v = v) in
// namespace on the clusters of env: prod, with extra spec lines.
func cmProfile(name, namespace, v, extra string) map[string]string {
	return map[string]string{
		"profiles/" + name + ".yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n" + extra +
			"  addons:\n  - name: cm\n    manifests: {path: " + name + "}\n",
		name + "/cm.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: notify-" + name + "}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: " + namespace + "}\ndata: {v: " + v + "}\n",
	}
}

// alertFile is alerts/ops.yaml: the happenings on, to the notification
// given as a flow mapping.
func alertFile(on, notification string) map[string]string {
	return map[string]string{"alerts/ops.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Alert\nmetadata: {name: ops}\nspec:\n  on: [" + on + "]\n  notifications:\n  - " + notification + "\n"}
}
