package cloud_test

import (
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/diff"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

func side(t *testing.T, rev string, files map[string]string) diff.Side {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, content := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(content)}
	}
	fleet, diags := spec.Load(fsys)
	if err := diags.Err(); err != nil {
		t.Fatalf("%s: %v", rev, err)
	}
	return diff.Side{Ref: rev, Revision: rev, Fleet: fleet, Facts: func(c *spec.Cluster) render.ClusterFacts {
		return render.ClusterFacts{Name: c.Metadata.Name, Labels: c.Metadata.Labels, KubernetesVersion: "v1.37.0"}
	}}
}

// TestPlanLiveReachesCloudClusters: `regatta plan --live` dry-runs on
// clusters that cluster.yaml reaches by a cloud provider, with the same
// tokens as the daemon, though the repository holds no kubeconfig.
func TestPlanLiveReachesCloudClusters(t *testing.T) {
	r := render.New(render.Options{})
	base := side(t, "base", map[string]string{})
	head := side(t, "head", fleetFiles("planned"))
	rep, err := diff.Compare(t.Context(), base, head, diff.Options{Renderer: r})
	if err != nil {
		t.Fatal(err)
	}
	m := apply.NewManager(t.Context(), apply.DefaultOptions())
	defer m.Close()
	lr, err := diff.Live(t.Context(), head, rep, diff.LiveOptions{Renderer: r, Manager: m,
		Kubeconfig:  diff.KubeconfigFromRepository(head.Fleet.FS, nil),
		Credentials: kubeconfig.NewCredentials(t.Context(), options())})
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Clusters) != len(providers) {
		t.Fatalf("%d clusters compared", len(lr.Clusters))
	}
	for _, c := range lr.Clusters {
		if !c.Reachable || c.Error != "" || len(c.Profiles) != 1 {
			t.Errorf("%s: reachable %v, error %q, %d profiles", c.Cluster, c.Reachable, c.Error, len(c.Profiles))
		}
	}
}
