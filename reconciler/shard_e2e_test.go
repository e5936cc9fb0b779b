package reconciler

import (
	"context"
	"errors"
	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regatta-dev/regatta/reconciler/shard"
	"github.com/regatta-dev/regatta/reconciler/status"
)

const shardLease = 3 * time.Second

var shardClusters = []string{"c35", "c36", "c37"}

// cutLink is a replica's connection to the management cluster, which the
// test can cut (every request fails).
type cutLink struct {
	cut  atomic.Bool
	next http.RoundTripper
}

func (l *cutLink) RoundTrip(r *http.Request) (*http.Response, error) {
	if l.cut.Load() {
		return nil, errors.New("partitioned")
	}
	return l.next.RoundTrip(r)
}

// shardReplica is one daemon of a sharded fleet, with its membership.
type shardReplica struct {
	id     string
	h      *harness
	member *shard.Member
	link   *cutLink
	stop   context.CancelFunc
	done   chan error
}

// startShardReplica starts a daemon that owns its share of the fleet by
// a membership Lease in c37 (the management cluster of this test).
func startShardReplica(t *testing.T, f *fleetRepo, group, id string) *shardReplica {
	t.Helper()
	link := &cutLink{}
	cfg := rest.CopyConfig(env.Cluster("c37").RESTConfig())
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { link.next = rt; return link }
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &shardReplica{id: id, link: link, done: make(chan error, 1)}
	r.member, err = shard.New(shard.Options{
		Leases:        cs.CoordinationV1(),
		Namespace:     "default",
		Group:         group,
		Identity:      id,
		LeaseDuration: shardLease,
		OnChange:      func() { r.h.d.OwnershipChanged() },
		Keys:          func() []string { return r.h.d.Clusters() },
	})
	if err != nil {
		t.Fatal(err)
	}
	r.h = newHarness(t, f, func(o *DaemonOptions) {
		o.Ownership = r.member
		o.Watch.Interval = 500 * time.Millisecond
	})
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	mctx, mstop := context.WithCancel(context.Background())
	go r.member.Run(mctx)
	go func() { r.done <- r.h.d.Run(ctx); mstop() }()
	t.Cleanup(func() { cancel(); <-r.done; r.h.d.Close() })
	return r
}

// applies sums regatta_applies_total of a replica for one cluster.
func (r *shardReplica) applies(t *testing.T, cluster string) float64 {
	t.Helper()
	mfs, err := r.h.m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "regatta_applies_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "cluster" && l.GetValue() == cluster {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

func probeProfile(version string) map[string]string {
	return map[string]string{
		"profiles/probe.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: probe}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: objects\n    manifests: {path: probe}\n",
		"probe/objects.yaml":  "apiVersion: v1\nkind: Namespace\nmetadata: {name: shard-e2e}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: probe, namespace: shard-e2e}\ndata: {version: " + version + "}\n",
	}
}

func probeAt(t *testing.T, version string) func() bool {
	return func() bool {
		for _, c := range shardClusters {
			if configMap(t, c, "shard-e2e", "probe")["version"] != version {
				return false
			}
		}
		return true
	}
}

// TestShardedDaemons runs three daemons sharing three clusters through
// membership Leases: each cluster is applied by exactly its owner. A
// replica partitioned from the management cluster in the middle of a
// rollout stops applying before the others take its clusters, which
// converge within lease duration + 5 s; the status branch, written by all
// three concurrently, ends with every cluster's record.
func TestShardedDaemons(t *testing.T) {
	f := newFleetRepo(t)
	files := probeProfile("v1")
	for _, c := range shardClusters {
		files = merge(files, clusterFiles(t, c, "env: prod"))
	}
	f.Commit("fleet", files)
	ids := []string{"regatta-0", "regatta-1", "regatta-2"}
	rs := map[string]*shardReplica{}
	for _, id := range ids {
		rs[id] = startShardReplica(t, f, "shard-e2e", id)
	}
	d := testenv.WaitFor(t, 30*time.Second, "every cluster at v1", probeAt(t, "v1"))
	t.Logf("three replicas converged the fleet in %s", d)
	owner := map[string]string{}
	for _, c := range shardClusters {
		owner[c] = rs[ids[0]].member.OwnerOf(c)
	}
	// A probe at v1 is seen as soon as its apply is written, before the
	// pass that wrote it ends and counts it.
	testenv.WaitFor(t, 10*time.Second, "every owner's apply counted", func() bool {
		for _, c := range shardClusters {
			if rs[owner[c]].applies(t, c) == 0 {
				return false
			}
		}
		return true
	})
	for _, c := range shardClusters {
		for _, id := range ids {
			n := rs[id].applies(t, c)
			if (id == owner[c]) != (n > 0) {
				t.Errorf("cluster %s (owner %s): %s applied %v times", c, owner[c], id, n)
			}
		}
	}
	// Partition the owner of c37 mid-rollout: its daemon keeps running.
	victim := rs[owner["c37"]]
	f.Commit("v2", probeProfile("v2"))
	for _, r := range rs {
		r.h.d.Trigger()
	}
	victim.link.cut.Store(true)
	cutAt := time.Now()
	testenv.WaitFor(t, shardLease, "the partitioned replica stops owning", func() bool {
		for _, c := range shardClusters {
			if victim.member.Owns(c) {
				return false
			}
		}
		return true
	})
	others := []*shardReplica{}
	for _, r := range rs {
		if r != victim {
			others = append(others, r)
		}
	}
	testenv.WaitFor(t, shardLease+5*time.Second, "another replica owns c37", func() bool {
		return others[0].member.Owns("c37") || others[1].member.Owns("c37")
	})
	t.Logf("c37 taken over %s after its owner was partitioned", time.Since(cutAt))
	fenced := map[string]float64{}
	for _, c := range shardClusters {
		fenced[c] = victim.applies(t, c)
	}
	testenv.WaitFor(t, shardLease+5*time.Second, "every cluster at v2", probeAt(t, "v2"))
	t.Logf("fleet at v2 %s after the owner of c37 was partitioned", time.Since(cutAt))
	f.Commit("v3", probeProfile("v3"))
	for _, r := range rs {
		r.h.d.Trigger()
	}
	testenv.WaitFor(t, 20*time.Second, "every cluster at v3", probeAt(t, "v3"))
	for _, c := range shardClusters {
		if n := victim.applies(t, c); n != fenced[c] {
			t.Errorf("partitioned replica applied to %s after it stopped owning it (%v -> %v)", c, fenced[c], n)
		}
	}
	testenv.WaitFor(t, 20*time.Second, "status branch has every record at v3", func() bool {
		return statusAt(t, f, shardClusters)
	})
	for _, c := range shardClusters {
		checkRecordHistory(t, f, c) // through the handover of c37
	}
}

// statusAt reports whether the status branch holds a record of every
// cluster on main's head, with an owner, and the fleet file.
func statusAt(t *testing.T, f *fleetRepo, clusters []string) bool {
	t.Helper()
	head := gitfleet.Git(t, f.Bare, "rev-parse", "main")
	if !strings.Contains(gitfleet.Git(t, f.Bare, "branch", "--list", "regatta/status"), "regatta/status") {
		return false
	}
	if !strings.Contains(f.Show("regatta/status", status.FleetFile), head) {
		return false
	}
	for _, c := range clusters {
		rec := runGitOK(f.Bare, "show", "regatta/status:"+status.ClusterFile(c))
		if !strings.Contains(rec, "sourceRevision: "+head) || !strings.Contains(rec, "owner: regatta-") {
			return false
		}
	}
	return true
}

// runGitOK is the output of git, empty when it fails.
func runGitOK(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, gitfleet.Env(dir)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return string(out)
}
