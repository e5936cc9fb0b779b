package deploy

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/cmd/regatta/app"
	"github.com/regatta-dev/regatta/internal/testenv"
)

// manifests reads one of the plain manifest files.
func manifests(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, data)
}

// TestManifestsMatchChart renders the chart with each plain manifest's
// values and fails when the file differs: the chart is the one source.
func TestManifestsMatchChart(t *testing.T) {
	c, err := LoadChart("charts/regatta", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Manifests {
		want, err := c.RenderManifest(context.Background(), ".", m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(m.File)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("deploy/%s differs from the chart rendered with deploy/%s: run `make manifests` (edit the chart, not the file)", m.File, m.Values)
		}
	}
}

// access is one permission the service account must or must not have.
type access struct {
	verb, group, resource, ns string
	want                      bool
}

var common = []access{
	{"get", "", "secrets", "regatta-system", true},
	{"create", "coordination.k8s.io", "leases", "regatta-system", true},
	{"update", "coordination.k8s.io", "leases", "regatta-system", true},
	{"list", "", "secrets", "regatta-system", false},
	{"watch", "", "secrets", "regatta-system", false},
	{"get", "", "secrets", "kube-system", false},
	{"delete", "", "secrets", "regatta-system", false},
	{"delete", "coordination.k8s.io", "leases", "regatta-system", false},
	{"create", "", "pods", "regatta-system", false},
	{"get", "", "configmaps", "regatta-system", false},
}

// TestManifestsApplyAndGrantWhatRegattaNeeds applies each plain manifest
// to a real API server and checks that the service account may read
// kubeconfig Secrets and hold its Lease (list the members' Leases when
// sharded), and nothing more; and that its pod passes the restricted Pod
// Security Standard its namespace enforces.
func TestManifestsApplyAndGrantWhatRegattaNeeds(t *testing.T) {
	checkManifests(t, env.Cluster("standby"), "regatta.yaml", append(common,
		access{"list", "coordination.k8s.io", "leases", "regatta-system", false}))
	checkManifests(t, env.Cluster("sharded"), "regatta-sharded.yaml", append(common,
		access{"list", "coordination.k8s.io", "leases", "regatta-system", true}))
}

func checkManifests(t *testing.T, cluster *testenv.Cluster, file string, checks []access) {
	t.Helper()
	objs := manifests(t, file)
	applyAll(t, cluster, objs)
	checkPodAdmitted(t, cluster, objs)
	checkAccess(t, cluster, file, "regatta-system", checks)
}

// checkAccess asks the API server whether the service account
// regatta in ns may do each thing.
func checkAccess(t *testing.T, cluster *testenv.Cluster, what, ns string, checks []access) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	for _, tt := range checks {
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User:   "system:serviceaccount:" + ns + ":regatta",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns},
			ResourceAttributes: &authzv1.ResourceAttributes{
				Verb:      tt.verb,
				Group:     tt.group,
				Resource:  tt.resource,
				Namespace: tt.ns,
			},
		}}
		res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status.Allowed != tt.want {
			t.Errorf("%s: %s %s/%s in %s: allowed=%v, want %v", what, tt.verb, tt.group, tt.resource, tt.ns, res.Status.Allowed, tt.want)
		}
	}
}

// TestDeploymentFlagsExist keeps the workload's arguments and REGATTA_
// variables in step with `regatta run`'s flags.
func TestDeploymentFlagsExist(t *testing.T) {
	root := app.NewRootCommand(io.Discard, io.Discard)
	run, _, err := root.Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Manifests {
		for _, obj := range manifests(t, m.File) {
			if k := obj.GetKind(); k == "Deployment" || k == "StatefulSet" {
				checkFlags(t, run, m.File, obj)
			}
		}
	}
}

func checkFlags(t *testing.T, run *cobra.Command, file string, obj *unstructured.Unstructured) {
	t.Helper()
	c := container(t, obj)
	args, _, _ := unstructured.NestedStringSlice(c, "args")
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("%s: args = %v, want run first", file, args)
	}
	if err := run.ParseFlags(args[1:]); err != nil {
		t.Errorf("%s: args %v: %v", file, args[1:], err)
	}
	envs, _, _ := unstructured.NestedSlice(c, "env")
	for _, e := range envs {
		name := e.(map[string]any)["name"].(string)
		flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "REGATTA_")), "_", "-")
		if run.Flags().Lookup(flag) == nil {
			t.Errorf("%s: env %s names no flag --%s of regatta run", file, name, flag)
		}
	}
}

// container is the regatta container of a Deployment or StatefulSet.
func container(t *testing.T, obj *unstructured.Unstructured) map[string]any {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%s %s: %d containers, want 1", obj.GetKind(), obj.GetName(), len(containers))
	}
	return containers[0].(map[string]any)
}
