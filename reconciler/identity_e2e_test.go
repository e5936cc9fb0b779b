package reconciler

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// deleteCounter counts the DELETE requests regatta sends, by cluster
// entry, in a fleet of its own (so that the inventories other tests left
// on the shared clusters are not this test's to withdraw).
type deleteCounter struct {
	fleet string
	mu    sync.Mutex
	n     map[string]int
}

func (d *deleteCounter) wrap(o *apply.Options) {
	o.Fleet = apply.Fleet{ID: d.fleet}
	d.n = map[string]int{}
	o.Client.WrapTransport = func(cluster string, rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodDelete {
				d.mu.Lock()
				d.n[cluster]++
				d.mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	}
}

func (d *deleteCounter) total() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, v := range d.n {
		n += v
	}
	return n
}

// uidOf returns a ConfigMap's UID on c36, "" when it does not exist.
func uidOf(t *testing.T, ns, name string) types.UID {
	t.Helper()
	cm, err := clientset(t, "c36").CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm.UID
}

func clusterRecord(res PassResult, name string) status.ClusterStatus {
	for _, c := range res.Snapshot.Clusters {
		if c.Cluster == name {
			return c
		}
	}
	return status.ClusterStatus{}
}

// identityProfile deploys ConfigMap <name> into namespace ns of the
// clusters labelled who: <who>.
func identityProfile(name, who, ns string) map[string]string {
	return map[string]string{
		"profiles/" + name + ".yaml": profileYAML(name, "who: "+who, "  addons:\n  - name: cm\n    manifests: {path: "+name+"}\n"),
		name + "/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: " + ns + "}\ndata: {v: \"1\"}\n",
	}
}

// TestTwoEntriesOneClusterSecondRefused: two whole-cluster entries reach
// c36 through different addresses (127.0.0.2 and 127.0.0.3), each selected
// by a profile of its own. The second by name is refused with a status
// naming both; the first applies. Nothing is ever deleted (no DELETE
// request from either entry, the first entry's object keeps its UID) —
// on a second pass, after a restart, and when a third entry sorting before
// both is added: the registration keeps the cluster with the entry that
// has it.
func TestTwoEntriesOneClusterSecondRefused(t *testing.T) {
	const ns = "ident-dup"
	ctx := context.Background()
	f := newFleetRepo(t)
	files := map[string]string{}
	for _, m := range []map[string]string{
		identityProfile("dup-pa", "a", ns), identityProfile("dup-pb", "b", ns), identityProfile("dup-pz", "z", ns),
		entryFiles(t, "dup-a", "who: a", env.Cluster("c36").KubeconfigAt("127.0.0.2"), ""),
		entryFiles(t, "dup-b", "who: b", env.Cluster("c36").KubeconfigAt("127.0.0.3"), ""),
	} {
		for k, v := range m {
			files[k] = v
		}
	}
	files["dup-pa/ns.yaml"] = "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n"
	f.Commit("two entries, one cluster", files)
	deletes := deleteCounter{fleet: "ident-dup"}
	run := func(what string) PassResult {
		t.Helper()
		h := newHarnessWith(t, f, nil, deletes.wrap)
		res, _ := h.d.RunOnce(ctx)
		if n := deletes.total(); n > 0 {
			t.Fatalf("%s: %d DELETE requests (%v)", what, n, deletes.n)
		}
		return res
	}
	res := run("first pass")
	if p := pairs(res, "dup-a")["dup-pa"]; p.State != status.StateApplied {
		t.Fatalf("dup-a: dup-pa %s %v, want Applied", p.State, p.Error)
	}
	uid := uidOf(t, ns, "dup-pa")
	check := func(what string, res PassResult, refused string) {
		t.Helper()
		c := clusterRecord(res, refused)
		for _, want := range []string{"cluster entries dup-a and " + refused + " reach the same cluster", refused + " is refused, nothing of it is applied, pruned or withdrawn"} {
			if !strings.Contains(c.Error, want) {
				t.Errorf("%s: %s's status error %q lacks %q", what, refused, c.Error, want)
			}
		}
		if got := uidOf(t, ns, "dup-pa"); got != uid || uid == "" {
			t.Errorf("%s: dup-pa's UID %q, was %q: deleted and created again", what, got, uid)
		}
		for _, cm := range []string{"dup-pb", "dup-pz"} {
			if uidOf(t, ns, cm) != "" {
				t.Errorf("%s: the refused entries' ConfigMap %s was applied", what, cm)
			}
		}
	}
	check("first pass", res, "dup-b")
	check("second daemon", run("second daemon"), "dup-b")
	f.Commit("an entry sorting first reaches the same cluster", entryFiles(t, "aa-dup", "who: z", env.Cluster("c36").KubeconfigAt("127.0.0.4"), ""))
	res = run("entry added")
	check("entry added", res, "aa-dup")
	check("entry added", res, "dup-b")
	if p := pairs(res, "dup-a")["dup-pa"]; p.State != status.StateApplied {
		t.Errorf("dup-a after aa-dup came: dup-pa %s %v, want Applied", p.State, p.Error)
	}
}

// TestRenamedEntryKeepsObjects: a cluster folder renamed in one commit
// (same kubeconfig, same labels) keeps its objects: the renamed entry
// takes over the registration and the inventories, nothing is deleted and
// created again (same UIDs, no DELETE request).
func TestRenamedEntryKeepsObjects(t *testing.T) {
	const ns = "ident-ren"
	ctx := context.Background()
	f := newFleetRepo(t)
	files := identityProfile("ren-p", "ren", ns)
	files["ren-p/ns.yaml"] = "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n"
	old := entryFiles(t, "ren-old", "who: ren", env.Cluster("c36").KubeconfigAt("127.0.0.5"), "")
	for k, v := range old {
		files[k] = v
	}
	f.Commit("ren-old", files)
	deletes := deleteCounter{fleet: "ident-ren"}
	h := newHarnessWith(t, f, nil, deletes.wrap)
	if _, err := h.d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	uid := uidOf(t, ns, "ren-p")
	nsObj, err := clientset(t, "c36").CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || uid == "" {
		t.Fatalf("not applied: %v", err)
	}
	rename := entryFiles(t, "ren-new", "who: ren", env.Cluster("c36").KubeconfigAt("127.0.0.5"), "")
	for k := range old {
		rename[k] = "" // deleted
	}
	f.Commit("rename ren-old to ren-new", rename)
	res, err := h.d.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := pairs(res, "ren-new")["ren-p"]; p.State != status.StateApplied {
		t.Fatalf("ren-new: ren-p %s %v", p.State, p.Error)
	}
	after, err := clientset(t, "c36").CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || after.UID != nsObj.UID || uidOf(t, ns, "ren-p") != uid {
		t.Errorf("objects were deleted and created again (namespace %s -> %s, ConfigMap %s -> %s)", nsObj.UID, after.UID, uid, uidOf(t, ns, "ren-p"))
	}
	if n := deletes.total(); n > 0 {
		t.Errorf("%d DELETE requests (%v)", n, deletes.n)
	}
}
