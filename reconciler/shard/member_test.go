package shard

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
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

func startReplica(t *testing.T, ns, id string, keys func() []string) *replica {
	t.Helper()
	return startReplicaWith(t, ns, id, keys, nil)
}

func startReplicaWith(t *testing.T, ns, id string, keys func() []string, onChange func()) *replica {
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
		Keys:          keys,
		OnChange:      onChange,
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
	sampled  map[string]time.Time // when each replica was last sampled
	overlaps []string
}

// fenceFresh is how recent the last sample of a key's holder must be for
// another replica owning the key to count as an overlap. A sampler that
// was not scheduled for longer (a busy CI machine) may have missed the
// holder's release, and a handover through the API server takes longer.
const fenceFresh = 50 * time.Millisecond

func (f *fence) sample(id string, m *Member, keys []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sampled == nil {
		f.sampled = map[string]time.Time{}
	}
	now := time.Now()
	for _, k := range keys {
		owns := m.Owns(k)
		switch h := f.holder[k]; {
		case owns && h != "" && h != id && now.Sub(f.sampled[h]) <= fenceFresh:
			f.overlaps = append(f.overlaps, k+": "+h+" and "+id)
		case owns:
			f.holder[k] = id
		case h == id:
			delete(f.holder, k)
		}
	}
	f.sampled[id] = now
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

// TestPartitionedReplicaStopsBeforeTakeover runs three members on a real
// management API server. One is cut off from it (it stops renewing): it
// must stop owning its clusters before another owns any of them, and the
// others must own them within lease duration + 5 s. When the link comes
// back it takes back a third, only from the others; a member that stops
// releases its Lease and its share moves before the lease would expire.
func TestPartitionedReplicaStopsBeforeTakeover(t *testing.T) {
	ns := "default"
	keys := names("cluster", 30)
	ids := []string{"regatta-0", "regatta-1", "regatta-2"}
	rs := map[string]*replica{}
	for _, id := range ids {
		rs[id] = startReplica(t, ns, id, func() []string { return keys })
	}
	f := &fence{holder: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { defer close(watched); f.watch(ctx, rs, keys) }()
	defer func() { cancel(); <-watched }()

	d := testenv.WaitFor(t, 4*testLease, "every key owned, balanced", func() bool { return balanced(f, keys, ids) })
	t.Logf("three members own every key after %s", d)

	// Partition regatta-0.
	victim := rs["regatta-0"]
	victim.link.cut.Store(true)
	cutAt := time.Now()
	stopped := testenv.WaitFor(t, testLease, "the partitioned member stops owning", func() bool {
		return ownsNone(victim.m, keys)
	})
	testenv.WaitFor(t, testLease+5*time.Second, "the others own every key", func() bool {
		return balanced(f, keys, ids[1:])
	})
	took := time.Since(cutAt)
	if took > testLease+5*time.Second {
		t.Errorf("takeover took %s after the cut, want <= lease + 5s", took)
	}
	t.Logf("partitioned member stopped %s after the cut; the others owned its keys %s after the cut", stopped, took)
	if took <= stopped {
		t.Errorf("takeover (%s) before the partitioned member stopped (%s)", took, stopped)
	}

	// Heal: it comes back and takes a third, only from the others.
	before, _ := f.owners(keys)
	victim.link.cut.Store(false)
	testenv.WaitFor(t, 4*testLease, "the healed member owns its share again", func() bool { return balanced(f, keys, ids) })
	after, _ := f.owners(keys)
	n := 0
	for k, o := range after {
		if o != before[k] {
			n++
			if o != "regatta-0" {
				t.Errorf("heal moved %s to %s", k, o)
			}
		}
	}
	if n != len(keys)/3 {
		t.Errorf("heal moved %d keys, want %d", n, len(keys)/3)
	}

	// A graceful stop releases the Lease: its share moves well before a
	// lease duration.
	stopAt := time.Now()
	rs["regatta-2"].stop()
	testenv.WaitFor(t, testLease+5*time.Second, "the stopped member's share moves", func() bool {
		return balanced(f, keys, ids[:2])
	})
	moved := time.Since(stopAt)
	t.Logf("share of a stopped member moved %s after the stop", moved)
	if moved >= testLease {
		t.Errorf("a released Lease was taken over only after %s, as if it expired", moved)
	}

	cancel()
	<-watched
	f.noOverlaps(t)
}

func (f *fence) noOverlaps(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.overlaps {
		t.Errorf("two members owned %s at once", o)
	}
}

// balanced reports whether every key is owned by one of ids and their
// loads differ by at most one.
func balanced(f *fence, keys, ids []string) bool {
	got, all := f.owners(keys)
	if !all {
		return false
	}
	load := map[string]int{}
	for _, o := range got {
		if !slices.Contains(ids, o) {
			return false
		}
		load[o]++
	}
	lo, hi := len(keys), 0
	for _, id := range ids {
		lo, hi = min(lo, load[id]), max(hi, load[id])
	}
	return hi-lo <= 1
}

func ownsNone(m *Member, keys []string) bool {
	for _, k := range keys {
		if m.Owns(k) {
			return false
		}
	}
	return true
}

// TestMembersOnDifferentKeysNeverBothOwn: two members that share from
// different cluster lists (two revisions of the repository) assign some
// keys differently; the claims still keep them from owning one key at
// once. Once both list the same keys, every key is owned.
func TestMembersOnDifferentKeysNeverBothOwn(t *testing.T) {
	all := names("c", 12)
	var bKeys atomic.Pointer[[]string]
	older := append(slices.Clone(all[4:]), names("gone", 6)...)
	bKeys.Store(&older)
	rs := map[string]*replica{
		"rev-a": startReplica(t, "default", "rev-a", func() []string { return all }),
		"rev-b": startReplica(t, "default", "rev-b", func() []string { return *bKeys.Load() }),
	}
	keys := append(slices.Clone(all), names("gone", 6)...)
	f := &fence{holder: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { defer close(watched); f.watch(ctx, rs, keys) }()
	defer func() { cancel(); <-watched }()

	testenv.WaitFor(t, 4*testLease, "both members active", func() bool {
		return rs["rev-a"].m.Owns(FleetKey) || rs["rev-b"].m.Owns(FleetKey)
	})
	differ, both := 0, 0
	for _, k := range keys {
		a, b := rs["rev-a"].m.OwnerOf(k), rs["rev-b"].m.OwnerOf(k)
		if a != b {
			differ++
		}
		if a == "rev-a" && b == "rev-b" {
			both++ // each assigns it to itself: only the claims decide
		}
	}
	t.Logf("the two members assign %d of %d keys differently, %d each to itself", differ, len(keys), both)
	if differ == 0 {
		t.Error("the test needs members that disagree")
	}
	deadline := time.Now().Add(2 * testLease)
	for time.Now().Before(deadline) { // a bounded window of disagreement
		time.Sleep(50 * time.Millisecond)
	}
	bKeys.Store(&all)
	testenv.WaitFor(t, 2*testLease, "every key owned once both list the same keys", func() bool {
		return balanced(f, all, []string{"rev-a", "rev-b"})
	})
	cancel()
	<-watched
	f.noOverlaps(t)
}

// TestDuplicateIdentityOwnsNothing: two processes started with one
// identity keep overwriting one Lease; neither may own anything, since
// both would work on the same clusters.
func TestDuplicateIdentityOwnsNothing(t *testing.T) {
	keys := []string{"c1", "c2", "c3", "c4"}
	a := startReplica(t, "default", "twin", func() []string { return keys })
	b := startReplica(t, "default", "twin", func() []string { return keys })
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
