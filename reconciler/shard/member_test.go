package shard

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regatta-dev/regatta/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}}}, &env)
}

const testLease = 3 * time.Second

// partitionable is a replica's link to the management cluster that the
// test can cut: every request fails while it is cut.
type partitionable struct {
	cut  atomic.Bool
	next http.RoundTripper
}

var errPartitioned = errors.New("partitioned from the management cluster")

func (p *partitionable) RoundTrip(r *http.Request) (*http.Response, error) {
	if p.cut.Load() {
		return nil, errPartitioned
	}
	return p.next.RoundTrip(r)
}

// replica is a Member with its own link and run loop.
type replica struct {
	m      *Member
	link   *partitionable
	cancel context.CancelFunc
	done   chan struct{}
}

func startReplica(t *testing.T, ns, id string) *replica {
	t.Helper()
	link := &partitionable{}
	cfg := rest.CopyConfig(env.Cluster("mgmt").RESTConfig())
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { link.next = rt; return link }
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{
		Leases:        cs.CoordinationV1(),
		Namespace:     ns,
		Group:         "regatta",
		Identity:      id,
		LeaseDuration: testLease,
		Log:           slog.New(slog.NewTextHandler(logOut(t), nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{m: m, link: link, cancel: cancel, done: make(chan struct{})}
	go func() { defer close(r.done); m.Run(ctx) }()
	t.Cleanup(r.stop)
	return r
}

func (r *replica) stop() {
	r.cancel()
	<-r.done
}

// fence watches every replica's Owns for every key, as a worker that
// checks before each step would, and records any moment two replicas
// both believed they owned one key.
type fence struct {
	mu       sync.Mutex
	holder   map[string]string
	overlaps []string
}

func (f *fence) sample(id string, m *Member, keys []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		owns := m.Owns(k)
		switch h := f.holder[k]; {
		case owns && h != "" && h != id:
			f.overlaps = append(f.overlaps, k+": "+h+" and "+id)
		case owns:
			f.holder[k] = id
		case h == id:
			delete(f.holder, k)
		}
	}
}

// owners returns the holder of every key, and whether every key has one.
func (f *fence) owners(keys []string) (map[string]string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for _, k := range keys {
		if f.holder[k] == "" {
			return out, false
		}
		out[k] = f.holder[k]
	}
	return out, true
}

func (f *fence) watch(ctx context.Context, rs map[string]*replica, keys []string) {
	for {
		for id, r := range rs {
			f.sample(id, r.m, keys)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// TestPartitionedReplicaStopsBeforeTakeover runs three members on a real
// management API server. One is cut off from it (it stops renewing): it
// must stop owning its clusters before another owns any of them, and the
// others must own them within lease duration + 5 s. When the link comes
// back it takes back only its share; a member that stops releases its
// Lease and its share moves before the lease would expire.
func TestPartitionedReplicaStopsBeforeTakeover(t *testing.T) {
	ns := "default"
	keys := make([]string, 30)
	for i := range keys {
		keys[i] = "cluster-" + string(rune('a'+i%26)) + string(rune('0'+i/26))
	}
	ids := []string{"regatta-0", "regatta-1", "regatta-2"}
	rs := map[string]*replica{}
	for _, id := range ids {
		rs[id] = startReplica(t, ns, id)
	}
	f := &fence{holder: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { defer close(watched); f.watch(ctx, rs, keys) }()
	defer func() { cancel(); <-watched }()

	want := Assign(keys, ids)
	d := waitFor(t, "every key owned as hashed", 4*testLease, func() bool { return ownedAs(f, keys, want) })
	t.Logf("three members own every key after %s", d)

	// Partition regatta-0.
	victim := rs["regatta-0"]
	victim.link.cut.Store(true)
	cutAt := time.Now()
	stopped := waitFor(t, "the partitioned member stops owning", testLease, func() bool {
		return ownsNone(victim.m, keys)
	})
	survivors := Assign(keys, ids[1:])
	waitFor(t, "the others own every key", testLease+5*time.Second, func() bool {
		return ownedAs(f, keys, survivors)
	})
	took := time.Since(cutAt)
	if took > testLease+5*time.Second {
		t.Errorf("takeover took %s after the cut, want <= lease + 5s", took)
	}
	t.Logf("partitioned member stopped %s after the cut; the others owned its keys %s after the cut", stopped, took)
	if took <= stopped {
		t.Errorf("takeover (%s) before the partitioned member stopped (%s)", took, stopped)
	}

	// Heal: it comes back and takes back only its own share.
	before, _ := f.owners(keys)
	victim.link.cut.Store(false)
	waitFor(t, "the healed member owns its share again", 4*testLease, func() bool { return ownedAs(f, keys, want) })
	after, _ := f.owners(keys)
	for k, o := range after {
		if o != before[k] && o != "regatta-0" {
			t.Errorf("heal moved %s to %s", k, o)
		}
	}

	// A graceful stop releases the Lease: its share moves well before a
	// lease duration.
	stopAt := time.Now()
	rs["regatta-2"].stop()
	waitFor(t, "the stopped member's share moves", testLease+5*time.Second, func() bool {
		return ownedAs(f, keys, Assign(keys, ids[:2]))
	})
	moved := time.Since(stopAt)
	t.Logf("share of a stopped member moved %s after the stop", moved)
	if moved >= testLease {
		t.Errorf("a released Lease was taken over only after %s, as if it expired", moved)
	}

	cancel()
	<-watched
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.overlaps {
		t.Errorf("two members owned %s at once", o)
	}
}

func ownedAs(f *fence, keys []string, want map[string]string) bool {
	got, all := f.owners(keys)
	if !all {
		return false
	}
	for k, o := range want {
		if got[k] != o {
			return false
		}
	}
	return true
}

func ownsNone(m *Member, keys []string) bool {
	for _, k := range keys {
		if m.Owns(k) {
			return false
		}
	}
	return true
}

// TestDuplicateIdentityOwnsNothing: two processes started with one
// identity keep overwriting one Lease; neither may own anything, since
// both would work on the same clusters.
func TestDuplicateIdentityOwnsNothing(t *testing.T) {
	a := startReplica(t, "default", "twin")
	b := startReplica(t, "default", "twin")
	keys := []string{"c1", "c2", "c3", "c4"}
	deadline := time.Now().Add(3 * testLease)
	for time.Now().Before(deadline) {
		for _, k := range keys {
			if a.m.Owns(k) && b.m.Owns(k) {
				t.Fatalf("both twins own %s", k)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// logOut is where the members log: the test log with -v.
func logOut(t *testing.T) io.Writer {
	if testing.Verbose() {
		return testLog{t}
	}
	return io.Discard
}
