package deploy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/regatta-dev/regatta/cmd/regatta/app"
	"github.com/regatta-dev/regatta/internal/testenv"
)

// execAsRegatta, set in a child's environment, makes the test binary run
// as the regatta command with its arguments.
const execAsRegatta = "DEPLOY_TEST_EXEC_AS_REGATTA"

// env holds the package's API servers: "standby" and "sharded" receive
// the plain manifests (both use namespace regatta-system), "chart" the
// chart's renders, each test in its own namespaces; "live" has
// controllers and kwok nodes, so the chart's workload really runs.
var env *testenv.Env

func TestMain(m *testing.M) {
	if os.Getenv(execAsRegatta) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := app.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	testenv.Main(m, testenv.Options{Clusters: []testenv.ClusterOptions{
		{Name: "standby"}, {Name: "sharded"}, {Name: "chart"},
		{Name: "live", Controllers: &testenv.Controllers{Nodes: 2}},
	}}, &env)
}

// decode reads a multi-document YAML stream.
func decode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
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

// warnings collects the API server's warnings (Pod Security's among them).
type warnings struct{ list []string }

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.list = append(w.list, text)
}

// applyAll applies objs server-side, in order, and returns the warnings
// the API server sent.
func applyAll(t *testing.T, cluster *testenv.Cluster, objs []*unstructured.Unstructured) []string {
	t.Helper()
	w := &warnings{}
	cfg := rest.CopyConfig(cluster.RESTConfig())
	cfg.WarningHandler = w
	dyn := dynamic.NewForConfigOrDie(cfg)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg)))
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		data, err := obj.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		ri := dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
		force := true
		if _, err := ri.Patch(t.Context(), obj.GetName(), types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: "deploy-test", Force: &force}); err != nil {
			t.Fatalf("apply %s %s/%s: %v", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return w.list
}
