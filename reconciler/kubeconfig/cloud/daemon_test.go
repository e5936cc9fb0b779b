package cloud_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/repo"
)

// fleetFiles is a fleet of the three cloud clusters, each with its own
// profile writing data into a ConfigMap.
func fleetFiles(data string) map[string]string {
	files := map[string]string{}
	for _, p := range providers {
		ca := base64.StdEncoding.EncodeToString(env.Cluster(p.cluster).CAData())
		server := env.Cluster(p.cluster).URL()
		cloudSpec := fmt.Sprintf("{provider: %s, server: %q, certificateAuthorityData: %s", p.name, server, ca)
		if p.name == "aws" {
			cloudSpec += ", cluster: " + eksARN
		}
		addEntry(files, "cloud-"+p.name, cloudSpec+"}", data)
	}
	return files
}

// addEntry adds a cluster entry reached by cloudSpec, and its profile
// writing data into the ConfigMap data of the namespace named after it.
func addEntry(files map[string]string, name, cloudSpec, data string) {
	files["clusters/"+name+"/cluster.yaml"] = fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: %s}\nspec:\n  kubeconfig:\n    cloud: %s\n", name, cloudSpec)
	files["profiles/"+name+".yaml"] = fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: %s}\nspec:\n  clusterRefs: [%s]\n  addons:\n  - name: cm\n    manifests: {path: manifests/%s}\n", name, name, name)
	files["manifests/"+name+"/cm.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: data, namespace: %s}\ndata: {value: %q}\n", name, name, data)
}

func newDaemon(t *testing.T, url string) *reconciler.Daemon {
	t.Helper()
	src, err := repo.NewSource(repo.Options{URL: url, Auth: repo.Auth{Username: gitfleet.User, Password: gitfleet.Password}})
	if err != nil {
		t.Fatal(err)
	}
	ao := apply.DefaultOptions()
	ao.Client.Timeout, ao.HealthTimeout, ao.HealthPollInterval = 5*time.Second, 20*time.Second, 500*time.Millisecond
	d := reconciler.Build(t.Context(), reconciler.Setup{
		Daemon: reconciler.DaemonOptions{Source: src, Watch: repo.DefaultWatchOptions(), StatusBranch: "regatta/status",
			StatusAuthor: repo.Signature{Name: "regatta", Email: "regatta@example.com"}, ShutdownGrace: 10 * time.Second},
		Apply: ao,
		Reconciler: reconciler.Options{Renderer: render.New(render.Options{}), Log: slog.New(slog.NewTextHandler(testLog{t}, nil)), ClusterTimeout: 5 * time.Second, HealthTimeout: 20 * time.Second,
			Credentials: kubeconfig.NewCredentials(t.Context(), options())},
	})
	t.Cleanup(d.Close)
	return d
}

// testLog writes the daemon's log lines to the test's log.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func clusterStatus(snap status.Snapshot, name string) status.ClusterStatus {
	for _, c := range snap.Clusters {
		if c.Cluster == name {
			return c
		}
	}
	return status.ClusterStatus{}
}

func configMapValue(t *testing.T, cluster, namespace string) string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(env.Cluster(cluster).RESTConfig())
	cm, err := cs.CoreV1().ConfigMaps(namespace).Get(t.Context(), "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data["value"]
}

// TestDaemonRevokedIdentityFailsOnlyItsCluster: the daemon reaches three
// cloud clusters with their providers' tokens (no kubeconfig anywhere);
// once the AWS role refuses regatta, the next commit reaches the gcp and
// azure clusters, and the aws cluster's status names the provider and what
// is missing; nothing of it is changed.
func TestDaemonRevokedIdentityFailsOnlyItsCluster(t *testing.T) {
	fleet := gitfleet.New(t)
	fleet.Commit("fleet", fleetFiles("one"))
	d := newDaemon(t, fleet.URL)
	if res, err := d.RunOnce(t.Context()); err != nil {
		t.Fatalf("first pass: %v (%+v)", err, res.Snapshot.Clusters)
	}
	for _, p := range providers {
		if got := configMapValue(t, p.cluster, "cloud-"+p.name); got != "one" {
			t.Fatalf("%s: value %q after the first pass", p.name, got)
		}
	}
	sts.Revoke(true)
	t.Cleanup(func() { sts.Revoke(false) })
	// The API server keeps a token it verified for 10 s (as EKS does);
	// then the aws cluster's token is refused (401), no new one can be
	// had, and the next pass says why.
	var aws status.ClusterStatus
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		res, _ := d.RunOnce(ctx)
		aws = clusterStatus(res.Snapshot, "cloud-aws")
		if aws.Reachable || !strings.Contains(aws.Error, "cluster cloud-aws: aws credentials") {
			return fmt.Errorf("cloud-aws: reachable %v, error %q", aws.Reachable, aws.Error)
		}
		return nil
	})
	fleet.Commit("two", fleetFiles("two"))
	res, _ := d.RunOnce(t.Context())
	aws = clusterStatus(res.Snapshot, "cloud-aws")
	if aws.Reachable {
		t.Fatal("the revoked cluster is reachable again")
	}
	for _, want := range []string{"AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AccessDenied"} {
		if !strings.Contains(aws.Error, want) {
			t.Errorf("status error %q does not say what is missing (%s)", aws.Error, want)
		}
	}
	if got := configMapValue(t, "eks", "cloud-aws"); got != "one" {
		t.Errorf("the revoked cluster was changed: %q", got)
	}
	for _, p := range providers[1:] {
		if got := configMapValue(t, p.cluster, "cloud-"+p.name); got != "two" {
			t.Errorf("%s: value %q, want the new commit's", p.name, got)
		}
	}
}
