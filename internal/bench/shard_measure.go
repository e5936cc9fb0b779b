package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/reconciler/shard"
)

// converge starts the replicas and times every cluster reaching v1.
func (s *sharded) converge(ctx context.Context, res *ShardResult) error {
	begin := time.Now()
	for _, id := range s.ids {
		if err := s.start(id); err != nil {
			return err
		}
	}
	if err := s.waitAll(ctx, s.names, "v1", 5*time.Minute); err != nil {
		return err
	}
	res.ConvergeSecs = time.Since(begin).Seconds()
	s.o.Logf("shard: %d clusters converged %.1fs after %d replicas started (lease %s)", len(s.names), res.ConvergeSecs, len(s.ids), s.o.LeaseDuration)
	return nil
}

// takeover SIGKILLs a replica once it started applying v2 to one of its
// clusters and times its unfinished clusters reaching v2.
func (s *sharded) takeover(ctx context.Context, res *ShardResult) error {
	owners, err := s.settled(ctx, s.ids, time.Minute)
	if err != nil {
		return err
	}
	res.Victim = s.ids[0]
	mine := ownedBy(owners, res.Victim)
	res.VictimOwned = len(mine)
	if _, err := s.git.Commit(ctx, "v2", s.files("v2", false)); err != nil {
		return err
	}
	if err := s.waitMid(ctx, mine, "v2"); err != nil {
		return err
	}
	s.procs[res.Victim].Kill()
	killed := time.Now()
	var pending []string
	for _, n := range mine {
		if v, _ := s.configMap(ctx, n, "probe"); v != "v2" {
			pending = append(pending, n)
		}
	}
	res.Pending = len(pending)
	if err := s.waitAll(ctx, pending, "v2", 2*s.o.LeaseDuration+time.Minute); err != nil {
		return err
	}
	res.TakeoverSecs = time.Since(killed).Seconds()
	s.o.Logf("shard: SIGKILL of %s (%d clusters, %d not at v2): taken over and at v2 %.1fs after the kill", res.Victim, len(mine), len(pending), res.TakeoverSecs)
	return s.waitAll(ctx, s.names, "v2", time.Minute)
}

// rejoin starts the killed replica again and counts the clusters that
// change owner.
func (s *sharded) rejoin(ctx context.Context, res *ShardResult) error {
	survivors := s.ids[1:]
	before, err := s.settled(ctx, survivors, 2*s.o.LeaseDuration+time.Minute)
	if err != nil {
		return err
	}
	begin := time.Now()
	if err := s.start(res.Victim); err != nil {
		return err
	}
	after, err := s.settled(ctx, s.ids, 2*s.o.LeaseDuration+time.Minute)
	if err != nil {
		return err
	}
	res.RejoinSecs = time.Since(begin).Seconds()
	for n, o := range after {
		if before[n] != o {
			res.Moved++
		}
	}
	s.o.Logf("shard: %s rejoined: %d of %d clusters moved, owners settled %.1fs after its start", res.Victim, res.Moved, len(s.names), res.RejoinSecs)
	if _, err := s.git.Commit(ctx, "v3", s.files("v3", false)); err != nil {
		return err
	}
	return s.waitAll(ctx, s.names, "v3", time.Minute)
}

// memory reads every replica's resident memory.
func (s *sharded) memory(ctx context.Context, res *ShardResult) error {
	owners, err := s.settled(ctx, s.ids, time.Minute)
	if err != nil {
		return err
	}
	for _, id := range s.ids {
		rss, hwm, err := ProcStatus(s.procs[id].Pid())
		if err != nil {
			return err
		}
		res.Memory = append(res.Memory, ReplicaMemory{Replica: id, Clusters: len(ownedBy(owners, id)), RSS: rss, HWM: hwm})
		s.o.Logf("shard: %s owns %d clusters, RSS %d MiB (peak %d MiB)", id, len(ownedBy(owners, id)), rss>>20, hwm>>20)
	}
	return nil
}

// settled waits until the Leases of ids claim every cluster once,
// balanced, and returns the owners.
func (s *sharded) settled(ctx context.Context, ids []string, within time.Duration) (map[string]string, error) {
	deadline := time.Now().Add(within)
	for {
		owners, ok, err := s.claims(ctx, ids)
		if err != nil {
			return nil, err
		}
		if ok {
			return owners, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("owners of %v not settled within %s: %v", ids, within, owners)
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// claims reads the clusters claimed in the Leases of ids; ok when each
// is claimed by one, nothing drains, and the shares are balanced.
func (s *sharded) claims(ctx context.Context, ids []string) (map[string]string, bool, error) {
	owners, drained := map[string]string{}, false
	for _, id := range ids {
		l, err := s.mgmt.CoordinationV1().Leases("regatta-system").Get(ctx, "regatta-"+id, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return owners, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		var c struct{ Owns, Draining []string }
		_ = json.Unmarshal([]byte(l.Annotations[shard.ClaimsAnnotation]), &c)
		drained = drained || len(c.Draining) > 0
		for _, k := range c.Owns {
			if _, dup := owners[k]; dup {
				return owners, false, nil
			}
			owners[k] = id
		}
	}
	lo, hi := len(s.names), 0
	for _, id := range ids {
		lo, hi = min(lo, len(ownedBy(owners, id))), max(hi, len(ownedBy(owners, id)))
	}
	ok := !drained && hi-lo <= 1 && len(ownedBy(owners, "")) == 0
	for _, n := range s.names {
		ok = ok && owners[n] != ""
	}
	return owners, ok, nil
}

func ownedBy(owners map[string]string, id string) []string {
	var out []string
	for k, o := range owners {
		if o == id && k != shard.FleetKey {
			out = append(out, k)
		}
	}
	return out
}

// waitMid returns once one of clusters has the first bulk ConfigMap at
// version and not yet the probe.
func (s *sharded) waitMid(ctx context.Context, clusters []string, version string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for _, n := range clusters {
			bulk, _ := s.configMap(ctx, n, "bulk-0")
			probe, _ := s.configMap(ctx, n, "probe")
			if bulk == version && probe != version {
				return nil
			}
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("no cluster of %v started applying %s", clusters, version)
}

// waitAll waits until every one of clusters has the probe at version.
func (s *sharded) waitAll(ctx context.Context, clusters []string, version string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		left := 0
		for _, n := range clusters {
			if v, _ := s.configMap(ctx, n, "probe"); v != version {
				left++
			}
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d clusters not at %s within %s", left, len(clusters), version, within)
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// configMap returns the version of one of the phase's ConfigMaps.
func (s *sharded) configMap(ctx context.Context, cluster, name string) (string, error) {
	cm, err := s.clients[cluster].CoreV1().ConfigMaps("shard-bench").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return cm.Data["version"], nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
