package reconciler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

// fleetHarness is newHarness under a fleet identity, without status.
func fleetHarness(t *testing.T, f *fleetRepo, fleet apply.Fleet) *harness {
	t.Helper()
	return newHarnessWith(t, f, func(o *DaemonOptions) { o.StatusBranch = "" }, func(o *apply.Options) { o.Fleet = fleet })
}

// fleetProfile renders n ConfigMaps <prefix>-<i> in namespace ns; with
// withNS also the namespace and the ConfigMap "shared" in namespace
// fleets-shared that the platform profiles of both fleets render.
func fleetProfile(name, ns, prefix string, n int, withNS bool) map[string]string {
	var b strings.Builder
	if withNS {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n", ns)
	}
	for i := range n {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-%d, namespace: %s}\ndata: {by: %s}\n---\n", prefix, i, ns, prefix)
	}
	if withNS { // the platform profiles of both fleets
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared, namespace: fleets-shared}\ndata: {by: %s}\n", prefix)
	}
	return map[string]string{
		"profiles/" + name + ".yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: objects\n    manifests: {path: " + name + "}\n",
		name + "/objects.yaml":       b.String(),
	}
}

func merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestTwoFleetsShareACluster runs two daemons following different
// repositories against one cluster, with a profile of the same name in
// both, for several passes with withdrawals in each: neither loses an
// object, and the object both render stays with the fleet that had it.
func TestTwoFleetsShareACluster(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t, "c37")
	mustNS(t, "fleets-shared")
	fa, fb := newFleetRepo(t), newFleetRepo(t)
	fa.Commit("alpha", merge(clusterFiles(t, "c37", "env: prod"),
		fleetProfile("platform", "fleets-a", "a-platform", 5, true), fleetProfile("extras", "fleets-a", "a-extras", 3, false)))
	fb.Commit("beta", merge(clusterFiles(t, "c37", "env: prod"),
		fleetProfile("platform", "fleets-b", "b-platform", 5, true), fleetProfile("team", "fleets-b", "b-team", 3, false)))
	ha := fleetHarness(t, fa, apply.Fleet{ID: "alpha"})
	hb := fleetHarness(t, fb, apply.Fleet{ID: "beta"})

	want := map[string][]string{} // namespace -> ConfigMaps that must exist
	set := func(ns, prefix string, n int) {
		want[ns] = slicesWithout(want[ns], prefix)
		for i := range n {
			want[ns] = append(want[ns], fmt.Sprintf("%s-%d", prefix, i))
		}
	}
	set("fleets-a", "a-platform", 5)
	set("fleets-a", "a-extras", 3)
	set("fleets-b", "b-platform", 5)
	set("fleets-b", "b-team", 3)
	pass := func(step string) {
		t.Helper()
		for _, h := range []*harness{ha, hb, ha, hb} {
			if _, err := h.d.RunOnce(ctx); err != nil && !errors.Is(err, ErrUnconverged) {
				t.Fatalf("%s: %v", step, err)
			}
		}
		for ns, names := range want {
			for _, n := range names {
				if configMap(t, "c37", ns, n) == nil {
					t.Fatalf("%s: ConfigMap %s/%s lost", step, ns, n)
				}
			}
		}
		if by := configMap(t, "c37", "fleets-shared", "shared")["by"]; by != "a-platform" {
			t.Fatalf("%s: the shared ConfigMap is now by %q, want it kept by fleet alpha", step, by)
		}
	}
	pass("first rollout")
	cm := configMapObj(t, "c37", "fleets-shared", "shared")
	if cm.Labels[apply.LabelFleet] != "alpha" {
		t.Errorf("shared ConfigMap labels %v, want %s=alpha", cm.Labels, apply.LabelFleet)
	}

	// Each fleet withdraws a profile; the other's objects stay.
	fa.Commit("alpha drops extras", map[string]string{"profiles/extras.yaml": ""})
	set("fleets-a", "a-extras", 0)
	pass("alpha withdrew extras")
	fb.Commit("beta drops team", map[string]string{"profiles/team.yaml": ""})
	set("fleets-b", "b-team", 0)
	pass("beta withdrew team")
	for _, gone := range []string{"a-extras-0", "b-team-0"} {
		ns := map[bool]string{true: "fleets-a", false: "fleets-b"}[strings.HasPrefix(gone, "a-")]
		if configMap(t, "c37", ns, gone) != nil {
			t.Errorf("%s/%s was not withdrawn", ns, gone)
		}
	}
	// Beta withdraws its platform profile, which has alpha's name and
	// lost the shared object to alpha: alpha keeps everything.
	fb.Commit("beta drops platform", map[string]string{"profiles/platform.yaml": ""})
	set("fleets-b", "b-platform", 0)
	delete(want, "fleets-b")
	pass("beta withdrew platform")
	invs, err := cs.CoreV1().ConfigMaps(apply.InventoryNamespace).List(ctx, listByLabel(apply.LabelFleet+"=beta,"+apply.LabelInventory))
	if err != nil || len(invs.Items) != 0 {
		t.Errorf("beta inventories left: %v %v", invs, err)
	}
}

func slicesWithout(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, prefix+"-") {
			out = append(out, n)
		}
	}
	return out
}

func listByLabel(sel string) metav1.ListOptions { return metav1.ListOptions{LabelSelector: sel} }

// mustNS creates a namespace owned by no profile.
func mustNS(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_, err := clientset(t, "c37").CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
