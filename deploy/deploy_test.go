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

func manifests(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("regatta.yaml")
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

// TestManifestsApplyAndGrantWhatRegattaNeeds applies deploy/regatta.yaml
// to a real API server and checks the service account may read kubeconfig
// Secrets and hold its Lease, and nothing more.
func TestManifestsApplyAndGrantWhatRegattaNeeds(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}}})
	cfg := env.Cluster("mgmt").RESTConfig()
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(cfg)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg)))
	for _, obj := range manifests(t) {
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
			t.Fatalf("apply %s %s: %v", gvk.Kind, obj.GetName(), err)
		}
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	sa := "system:serviceaccount:regatta-system:regatta"
	for _, tt := range []struct {
		verb, group, resource, ns string
		want                      bool
	}{
		{"get", "", "secrets", "regatta-system", true},
		{"create", "coordination.k8s.io", "leases", "regatta-system", true},
		{"update", "coordination.k8s.io", "leases", "regatta-system", true},
		{"list", "", "secrets", "regatta-system", false},
		{"get", "", "secrets", "kube-system", false},
		{"delete", "", "secrets", "regatta-system", false},
	} {
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{User: sa,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:regatta-system"},
			ResourceAttributes: &authzv1.ResourceAttributes{Verb: tt.verb, Group: tt.group, Resource: tt.resource, Namespace: tt.ns}}}
		res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status.Allowed != tt.want {
			t.Errorf("%s %s/%s in %s: allowed=%v, want %v", tt.verb, tt.group, tt.resource, tt.ns, res.Status.Allowed, tt.want)
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
	for _, obj := range manifests(t) {
		if obj.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		c := containers[0].(map[string]any)
		args, _, _ := unstructured.NestedStringSlice(c, "args")
		if len(args) == 0 || args[0] != "run" {
			t.Fatalf("args = %v, want run first", args)
		}
		if err := run.ParseFlags(args[1:]); err != nil {
			t.Errorf("args %v: %v", args[1:], err)
		}
		envs, _, _ := unstructured.NestedSlice(c, "env")
		for _, e := range envs {
			name := e.(map[string]any)["name"].(string)
			flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "REGATTA_")), "_", "-")
			if run.Flags().Lookup(flag) == nil {
				t.Errorf("env %s names no flag --%s of regatta run", name, flag)
			}
		}
	}
}
