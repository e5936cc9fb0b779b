// Package deploy holds the manifests that run regatta in a management
// cluster; its test applies them to a real kube-apiserver.
package deploy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/regatta-dev/regatta/cmd/regatta/app"
	"github.com/regatta-dev/regatta/internal/testenv"
)

// files are the manifest sets: one leader and a standby, and three
// replicas sharing the fleet.
var files = []string{"regatta.yaml", "regatta-sharded.yaml"}

func manifests(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if m != nil {
			out = append(out, &unstructured.Unstructured{Object: m})
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
	{"get", "", "secrets", "kube-system", false},
	{"delete", "", "secrets", "regatta-system", false},
	{"delete", "coordination.k8s.io", "leases", "regatta-system", false},
}

// TestManifestsApplyAndGrantWhatRegattaNeeds applies each manifest set to
// a real API server and checks the service account may read kubeconfig
// Secrets and hold its Lease (list the members' Leases when sharded), and
// nothing more.
func TestManifestsApplyAndGrantWhatRegattaNeeds(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "standby"}, {Name: "sharded"}}})
	checkManifests(t, env.Cluster("standby"), "regatta.yaml", append(common,
		access{"list", "coordination.k8s.io", "leases", "regatta-system", false}))
	checkManifests(t, env.Cluster("sharded"), "regatta-sharded.yaml", append(common,
		access{"list", "coordination.k8s.io", "leases", "regatta-system", true}))
}

func checkManifests(t *testing.T, cluster *testenv.Cluster, file string, checks []access) {
	t.Helper()
	cfg := cluster.RESTConfig()
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(cfg)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg)))
	for _, obj := range manifests(t, file) {
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		data, _ := obj.MarshalJSON()
		ri := dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
		force := true
		if _, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: "deploy-test", Force: &force}); err != nil {
			t.Fatalf("%s: apply %s %s: %v", file, gvk.Kind, obj.GetName(), err)
		}
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	sa := "system:serviceaccount:regatta-system:regatta"
	for _, tt := range checks {
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{User: sa,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:regatta-system"},
			ResourceAttributes: &authzv1.ResourceAttributes{Verb: tt.verb, Group: tt.group, Resource: tt.resource, Namespace: tt.ns}}}
		res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status.Allowed != tt.want {
			t.Errorf("%s: %s %s/%s in %s: allowed=%v, want %v", file, tt.verb, tt.group, tt.resource, tt.ns, res.Status.Allowed, tt.want)
		}
	}
}

// TestDeploymentFlagsExist keeps the Deployment's arguments and REGATTA_
// variables in step with `regatta run`'s flags.
func TestDeploymentFlagsExist(t *testing.T) {
	root := app.NewRootCommand(io.Discard, io.Discard)
	run, _, err := root.Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		for _, obj := range manifests(t, file) {
			if k := obj.GetKind(); k == "Deployment" || k == "StatefulSet" {
				checkFlags(t, run, file, obj)
			}
		}
	}
}

func checkFlags(t *testing.T, run *cobra.Command, file string, obj *unstructured.Unstructured) {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	c := containers[0].(map[string]any)
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
