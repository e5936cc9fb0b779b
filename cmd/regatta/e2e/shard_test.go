package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

const (
	leaseDuration = 3 * time.Second
	nClusters     = 9
	bulk          = 100 // ConfigMaps of the first add-on: a window to catch a replica mid-rollout in
)

func fleetFiles(version string) map[string]string {
	var b strings.Builder
	for i := range bulk {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bulk-%d, namespace: shard-e2e}\ndata: {version: %s}\n---\n", i, version)
	}
	return map[string]string{
		"profiles/probe.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: probe}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: bulk
    manifests: {path: probe/bulk}
  - name: probe
    manifests: {path: probe/probe}
`,
		"probe/bulk/objects.yaml":  "apiVersion: v1\nkind: Namespace\nmetadata: {name: shard-e2e}\n---\n" + b.String(),
		"probe/probe/objects.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: probe, namespace: shard-e2e}\ndata: {version: " + version + "}\n",
	}
}

func clusterFile(name string) map[string]string {
	return map[string]string{"clusters/" + name + "/cluster.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: " + name + "\n  labels: {env: prod}\n"}
}

// fleet is the test's clusters and their clients.
type fleet struct {
	names   []string
	clients map[string]kubernetes.Interface
}

// at lists the clusters whose probe ConfigMap is at version (the last
// add-on of the profile, applied after the bulk one).
func (f fleet) at(t *testing.T, version string) []string {
	t.Helper()
	var out []string
	for _, n := range f.names {
		cm, err := f.clients[n].CoreV1().ConfigMaps("shard-e2e").Get(context.Background(), "probe", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data["version"] == version {
			out = append(out, n)
		}
	}
	return out
}

// owners reads the owner of each cluster record on the status branch,
// for the records at revision rev.
func owners(bare, rev string, names []string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		rec, err := gitOut(bare, "show", "regatta/status:status/clusters/"+n+".yaml")
		if err != nil || !strings.Contains(rec, "sourceRevision: "+rev) {
			continue
		}
		for _, l := range strings.Split(rec, "\n") {
			if v, ok := strings.CutPrefix(l, "owner: "); ok {
				out[n] = v
			}
		}
	}
	return out
}

// TestThreeReplicasShareNineClusters is the acceptance test of sharding:
// three regatta processes, nine real API servers (with audit logs) and a
// management API server holding the kubeconfig Secrets and the
// membership Leases. Every cluster converges, written by one replica
// only (the audit logs, which tell replicas apart by user agent); a
// replica SIGKILLed mid-rollout writes nothing after the kill and its
// clusters converge on the others within lease + 5 s; started again, it
// takes 3 clusters back (at most 4 may move).
func TestThreeReplicasShareNineClusters(t *testing.T) {
	opts := testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}}, AuditLog: true}
	f := fleet{clients: map[string]kubernetes.Interface{}}
	for i := range nClusters {
		name := fmt.Sprintf("c%d", i)
		f.names = append(f.names, name)
		opts.Clusters = append(opts.Clusters, testenv.ClusterOptions{Name: name})
	}
	env := testenv.StartT(t, opts)
	mgmt, err := kubernetes.NewForConfig(env.Cluster("mgmt").RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	repo := newRepo(t)
	files := fleetFiles("v1")
	for _, n := range f.names {
		kubeconfigSecret(t, mgmt, env.Cluster(n))
		if f.clients[n], err = kubernetes.NewForConfig(env.Cluster(n).RESTConfig()); err != nil {
			t.Fatal(err)
		}
		for k, v := range clusterFile(n) {
			files[k] = v
		}
	}
	rev := repo.commit(t, "fleet", files)
	dir := t.TempDir()
	mgmtKC := mgmtKubeconfig(t, dir, env.Cluster("mgmt"))
	logDir := logDirOr(dir)
	args := []string{"--repo", repo.bare, "--management-kubeconfig", mgmtKC, "--replicas-mode", "shard",
		"--replica-lease-duration", leaseDuration.String(), "--leader-elect-namespace", "default",
		"--interval", "500ms", "--status-interval", "1s", "--health-timeout", "30s", "--log-level", "info"}
	ids := []string{"regatta-0", "regatta-1", "regatta-2"}
	procs := map[string]*process{}
	start := time.Now()
	for _, id := range ids {
		procs[id] = startRegatta(t, id, logDir, args...)
	}
	testenv.WaitFor(t, 60*time.Second, "every cluster at v1", func() bool { return len(f.at(t, "v1")) == nClusters })
	t.Logf("first rollout: 9 clusters converged %s after the 3 replicas started (lease %s)", time.Since(start).Round(time.Millisecond), leaseDuration)

	// Each cluster was applied by exactly one replica, its owner.
	var want map[string]string
	testenv.WaitFor(t, 20*time.Second, "status records of v1 name their owners", func() bool {
		want = owners(repo.bare, rev, f.names)
		return len(want) == nClusters
	})
	for _, id := range ids {
		got, err := procs[id].applies()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range f.names {
			if (want[n] == id) != (got[n] > 0) {
				t.Errorf("cluster %s (owner %s): %s applied %v times", n, want[n], id, got[n])
			}
		}
	}
	t.Logf("owners after the first rollout: %v", loads(want, ids))

	// SIGKILL the owner of the most clusters mid-rollout of v2.
	victim := busiest(want)
	var theirs []kubernetes.Interface
	for n, o := range want {
		if o == victim {
			theirs = append(theirs, f.clients[n])
		}
	}
	var killed time.Time
	killMidRollout := midPass(t, theirs, "shard-e2e", "v2", func() {
		procs[victim].kill(syscall.SIGKILL)
		killed = time.Now()
	})
	rev = repo.commit(t, "v2", fleetFiles("v2"))
	killMidRollout()
	pending := len(f.names) - len(f.at(t, "v2"))
	testenv.WaitFor(t, leaseDuration+5*time.Second, "every cluster at v2 after the kill", func() bool { return len(f.at(t, "v2")) == nClusters })
	t.Logf("SIGKILL of %s (owner of %d clusters) with %d clusters not yet at v2: all at v2 %s later (lease %s + 5s allowed)",
		victim, count(want, victim), pending, time.Since(killed).Round(time.Millisecond), leaseDuration)
	var two map[string]string
	testenv.WaitFor(t, 20*time.Second, "status records of v2 name the survivors", func() bool {
		two = owners(repo.bare, rev, f.names)
		return len(two) == nClusters && count(two, victim) == 0
	})
	for n, o := range want {
		if o != victim && two[n] != o {
			t.Errorf("the kill of %s moved %s from %s to %s", victim, n, o, two[n])
		}
	}
	// The API servers' audit logs: until the kill every cluster was
	// written by its owner alone (v1 and the start of v2). Since, each
	// cluster had one writer besides the dead replica, whose requests sent
	// before it died (a busy API server may receive them a moment after
	// the kill) were all received before that writer's first.
	total, late := 0, 0
	for _, n := range f.names {
		w := writeSpans(t, env.Cluster(n), time.Time{}, killed)
		if len(w) != 1 || w[want[n]].n == 0 {
			t.Errorf("cluster %s (owner %s) was written by %v before the kill", n, want[n], w)
		}
		total += w[want[n]].n
		span := writeSpans(t, env.Cluster(n), killed, time.Now())
		dead, ok := span[victim]
		delete(span, victim)
		if len(span) > 1 {
			t.Errorf("cluster %s was written by %v after the kill of %s", n, span, victim)
		}
		for id, other := range span {
			if ok && !dead.last.Before(other.first) {
				t.Errorf("cluster %s: a write of the dead %s was received at %s, after %s's first at %s",
					n, victim, dead.last.Format(time.RFC3339Nano), id, other.first.Format(time.RFC3339Nano))
			}
		}
		late += dead.n
	}
	t.Logf("audit logs: %d writes to the 9 clusters before the kill, each cluster by one replica; "+
		"%d requests of the dead replica received after the kill, all before the next owner's first", total, late)

	// Restart it: it takes a third back, only from the others.
	restarted := time.Now()
	procs[victim] = startRegatta(t, victim, logDir, args...)
	rev = repo.commit(t, "v3", fleetFiles("v3"))
	testenv.WaitFor(t, 60*time.Second, "every cluster at v3", func() bool { return len(f.at(t, "v3")) == nClusters })
	var three map[string]string
	testenv.WaitFor(t, 30*time.Second, "status records of v3 name the three owners, balanced", func() bool {
		three = owners(repo.bare, rev, f.names)
		return len(three) == nClusters && count(three, victim) == nClusters/len(ids)
	})
	moved := 0
	for _, n := range f.names {
		if two[n] != three[n] {
			moved++
			if three[n] != victim {
				t.Errorf("restart of %s moved %s to %s", victim, n, three[n])
			}
		}
	}
	t.Logf("restart of %s: %d of 9 clusters moved (owners %v); fleet at v3 and every record on the status branch %s after the restart",
		victim, moved, loads(three, ids), time.Since(restarted).Round(time.Millisecond))
	if moved > 4 {
		t.Errorf("restart moved %d clusters, want at most 4", moved)
	}
	for _, n := range f.names {
		recordNeverGoesBack(t, repo.bare, n)
	}
}

// recordNeverGoesBack walks the status branch's commits, oldest first:
// a cluster's record never lowers its generation nor leaves a revision
// of the followed branch for an older one, across the kill, the takeover
// and the restart.
func recordNeverGoesBack(t *testing.T, bare, cluster string) {
	t.Helper()
	order := map[string]int{}
	for i, rev := range strings.Fields(git(t, bare, "rev-list", "--reverse", "main")) {
		order[rev] = i
	}
	file := "status/clusters/" + cluster + ".yaml"
	lastGen, lastRev, lastCommit := -1, -1, ""
	for _, c := range strings.Fields(git(t, bare, "rev-list", "--reverse", "regatta/status")) {
		rec, err := gitOut(bare, "show", c+":"+file)
		if err != nil {
			continue // not written yet
		}
		gen, rev := -1, -1
		for _, l := range strings.Split(rec, "\n") {
			if v, ok := strings.CutPrefix(l, "generation: "); ok {
				fmt.Sscan(v, &gen)
			}
			if v, ok := strings.CutPrefix(l, "sourceRevision: "); ok {
				rev = order[strings.TrimSpace(v)]
			}
		}
		if gen < lastGen || rev < lastRev {
			t.Errorf("status commit %.8s puts %s back: generation %d after %d, revision #%d after #%d (commit %.8s)",
				c, cluster, gen, lastGen, rev, lastRev, lastCommit)
		}
		lastGen, lastRev, lastCommit = gen, rev, c
	}
}

// span is when the writes of one replica to a cluster were received.
type span struct {
	first, last time.Time
	n           int
}

// writeSpans returns, by replica, the writes to a cluster received in
// [from, to), from its API server's audit log; replicas are told apart by
// their user agent, regatta/<identity>.
func writeSpans(t *testing.T, c *testenv.Cluster, from, to time.Time) map[string]span {
	t.Helper()
	events, err := testenv.ReadAuditLog(c.AuditLog())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]span{}
	for _, e := range events {
		id, ok := strings.CutPrefix(e.UserAgent, "regatta/")
		at := e.RequestReceivedTimestamp
		if !ok || at.Before(from) || !at.Before(to) {
			continue
		}
		s := out[id]
		if s.n == 0 || at.Before(s.first) {
			s.first = at
		}
		if at.After(s.last) {
			s.last = at
		}
		s.n++
		out[id] = s
	}
	return out
}

// configMap returns the version of a ConfigMap of the test; empty when
// it is missing.
func (f fleet) configMap(t *testing.T, cluster, name string) string {
	t.Helper()
	cm, err := f.clients[cluster].CoreV1().ConfigMaps("shard-e2e").Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data["version"]
}

// loads counts the clusters of each replica.
func loads(owner map[string]string, ids []string) map[string]int {
	out := map[string]int{}
	for _, id := range ids {
		out[id] = count(owner, id)
	}
	return out
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func busiest(owner map[string]string) string {
	best := ""
	for _, o := range owner {
		if best == "" || count(owner, o) > count(owner, best) || (count(owner, o) == count(owner, best) && o < best) {
			best = o
		}
	}
	return best
}

func count(owner map[string]string, id string) int {
	n := 0
	for _, o := range owner {
		if o == id {
			n++
		}
	}
	return n
}
