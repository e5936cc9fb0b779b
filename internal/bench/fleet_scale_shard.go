package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/shard"
)

// FleetShard is the fleet phase's shard run: Replicas `regatta run
// --replicas-mode shard` share the logical clusters; one is SIGKILLed in
// the middle of a fleet-wide change.
type FleetShard struct {
	Clusters  int     `json:"clusters"`
	Replicas  int     `json:"replicas"`
	LeaseSecs float64 `json:"leaseSeconds"`
	// ConvergeSecs is from starting the replicas (the whole fleet
	// committed) to every cluster having both profiles.
	ConvergeSecs float64 `json:"convergeSeconds"`
	Victim       string  `json:"victim"`
	VictimOwned  int     `json:"victimOwned"`
	// Pending are the victim's clusters without the change at the kill;
	// TakeoverSecs is from the kill to the last of them having it.
	Pending      int     `json:"pending"`
	TakeoverSecs float64 `json:"takeoverSeconds"`
	// Change is the push → each cluster having the change, the kill
	// included.
	Change Latency `json:"change"`
	// Twice counts the clusters whose changed marker was written more than
	// once for the change (audit logs): applied twice.
	Twice int `json:"appliedTwice"`
	// RSS are the surviving replicas' resident memory at the end.
	RSS []int64 `json:"rssBytes"`
	// Measured is the commit and date of a run carried over from an
	// earlier results.json (nil: this run).
	Measured *PhaseRun `json:"measured,omitempty"`
}

// RunFleetShard sets up Clusters logical clusters and runs replicas
// sharing them: the first rollout, then a change during which the first
// replica is SIGKILLed.
func RunFleetShard(ctx context.Context, o FleetOptions, replicas int, lease time.Duration) (*FleetShard, error) {
	res := &FleetShard{Clusters: o.Clusters, Replicas: replicas, LeaseSecs: lease.Seconds()}
	le, err := startLogicalEnv(ctx, o.Bins, o.Clusters, ServersFor(o.Clusters, o.PerServer), filepath.Join(o.Dir, "kubeconfigs"))
	if err != nil {
		return res, err
	}
	defer le.Stop()
	if err := le.setupUsers(ctx, o.SetupWorkers, regattaNamespace); err != nil {
		return res, err
	}
	fr := &fleetRun{o: o, le: le, res: &FleetRun{}, fleet: ScaleFleet{Clusters: le.Names, Objects: o.Objects}}
	if fr.git, err = StartGitRepo(ctx, filepath.Join(o.Dir, "git")); err != nil {
		return res, err
	}
	defer fr.git.Close()
	if _, err := fr.git.Commit(ctx, "fleet", fr.fleet.Files(0, true)); err != nil {
		return res, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if fr.watch, err = watchMarkers(wctx, le.Servers); err != nil {
		return res, err
	}
	sh := &fleetShards{fr: fr, lease: lease, procs: map[string]*Child{}, hooks: map[string]string{}}
	defer sh.stopAll()
	return res, sh.run(ctx, replicas, res)
}

// fleetShards are the replicas of a shard run.
type fleetShards struct {
	fr    *fleetRun
	lease time.Duration
	ids   []string
	procs map[string]*Child
	hooks map[string]string
}

func (sh *fleetShards) run(ctx context.Context, replicas int, res *FleetShard) error {
	fr := sh.fr
	begin := time.Now()
	for i := range replicas {
		id := fmt.Sprintf("regatta-%d", i)
		sh.ids = append(sh.ids, id)
		if err := sh.start(id); err != nil {
			return err
		}
	}
	gen0 := map[string]string{FleetDriftProfile: "0", FleetKustomizeProfile: "0"}
	if _, err := fr.watch.wait(ctx, fr.le.Names, gen0, begin, fr.within()); err != nil {
		return err
	}
	res.ConvergeSecs = time.Since(begin).Seconds()
	fr.o.Logf("fleet shard: %d clusters on %d replicas converged in %.1fs", fr.o.Clusters, replicas, res.ConvergeSecs)
	owners, err := sh.owners(ctx, 2*sh.lease+time.Minute)
	if err != nil {
		return err
	}
	res.Victim = sh.ids[0]
	mine := owned(owners, res.Victim)
	res.VictimOwned = len(mine)
	return sh.killMidChange(ctx, res, mine)
}

// killMidChange pushes the change, SIGKILLs the victim once some but not
// all of its clusters have it, and times the takeover.
func (sh *fleetShards) killMidChange(ctx context.Context, res *FleetShard, mine []string) error {
	fr := sh.fr
	rev, err := fr.git.Commit(ctx, "one-line change", fr.fleet.Files(1, true))
	if err != nil {
		return err
	}
	at := time.Now()
	for _, id := range sh.ids {
		fr.webhook = sh.hooks[id]
		if err := fr.notify(ctx); err != nil {
			return err
		}
	}
	gen1 := map[string]string{FleetDriftProfile: "1"}
	for {
		done := len(fr.watch.times(mine, gen1, at))
		if done > 0 && done < len(mine) {
			break
		}
		if done == len(mine) || time.Since(at) > fr.within() {
			return fmt.Errorf("the victim's %d clusters: %d had the change before it could be killed mid-change", len(mine), done)
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	sh.procs[res.Victim].Kill()
	killed := time.Now()
	res.Pending = len(mine) - len(fr.watch.times(mine, gen1, at))
	ts, err := fr.watch.wait(ctx, fr.le.Names, gen1, at, 2*sh.lease+fr.within())
	res.Change = NewLatency(ts, fr.o.Clusters)
	if err != nil {
		return err
	}
	last := time.Duration(0)
	for _, d := range fr.watch.times(mine, gen1, at) {
		last = max(last, d)
	}
	res.TakeoverSecs = at.Add(last).Sub(killed).Seconds()
	if res.Twice, err = sh.appliedTwice(at); err != nil {
		return err
	}
	for _, id := range sh.ids[1:] {
		rss, _, _ := ProcStatus(sh.procs[id].Pid())
		res.RSS = append(res.RSS, rss)
	}
	fr.o.Logf("fleet shard: SIGKILL of %s (%d clusters, %d without %s): the last of them had it %.1fs after the kill; %d clusters applied twice",
		res.Victim, len(mine), res.Pending, short(rev), res.TakeoverSecs, res.Twice)
	return nil
}

// start starts replica id with a webhook of its own.
func (sh *fleetShards) start(id string) error {
	fr := sh.fr
	if err := fr.startChildIn(filepath.Join(fr.o.Dir, id), "--replicas-mode", "shard", "--replica-identity", id,
		"--replica-lease-duration", sh.lease.String()); err != nil {
		return err
	}
	sh.procs[id], sh.hooks[id] = fr.child, fr.webhook
	return nil
}

func (sh *fleetShards) stopAll() {
	for _, c := range sh.procs {
		c.Stop()
	}
}

// owners waits until the replicas' Leases claim every cluster once and
// returns the owners.
func (sh *fleetShards) owners(ctx context.Context, within time.Duration) (map[string]string, error) {
	cs, err := kubernetes.NewForConfig(sh.fr.le.Mgmt.RESTConfig())
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(within)
	for {
		owners, err := leaseClaims(ctx, cs, sh.ids)
		if err == nil && len(owners) >= len(sh.fr.le.Names) {
			return owners, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("owners not settled within %s: %d of %d clusters claimed (%v)", within, len(owners), len(sh.fr.le.Names), err)
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// leaseClaims reads the clusters the replicas' membership Leases claim.
func leaseClaims(ctx context.Context, cs kubernetes.Interface, ids []string) (map[string]string, error) {
	owners := map[string]string{}
	for _, id := range ids {
		l, err := cs.CoordinationV1().Leases("regatta-system").Get(ctx, "regatta-"+id, metav1.GetOptions{})
		if err != nil {
			return owners, err
		}
		var c struct{ Owns, Draining []string }
		_ = json.Unmarshal([]byte(l.Annotations[shard.ClaimsAnnotation]), &c)
		if len(c.Draining) > 0 {
			return owners, fmt.Errorf("%s drains %d", id, len(c.Draining))
		}
		for _, k := range c.Owns {
			if k != shard.FleetKey {
				owners[k] = id
			}
		}
	}
	return owners, nil
}

func owned(owners map[string]string, id string) []string {
	var out []string
	for k, o := range owners {
		if o == id {
			out = append(out, k)
		}
	}
	return out
}

// appliedTwice counts the clusters whose fa marker was written more than
// once since t (audit logs of the fleet's servers).
func (sh *fleetShards) appliedTwice(t time.Time) (int, error) {
	writes := map[string][]testenv.AuditEvent{}
	for _, s := range sh.fr.le.Servers {
		evs, err := testenv.ReadAuditLog(s.AuditLog())
		if err != nil {
			return 0, err
		}
		for _, e := range evs {
			if e.StageTimestamp.Before(t) || e.ObjectRef.Name != FleetMarker(FleetDriftProfile) || e.Verb != "patch" || !clusterWrite(e) {
				continue
			}
			writes[e.ObjectRef.Namespace] = append(writes[e.ObjectRef.Namespace], e)
		}
	}
	n := 0
	for ns, evs := range writes {
		if len(evs) < 2 {
			continue
		}
		n++
		for _, e := range evs {
			// Which replica wrote when, and what the server answered:
			// the report's reader tells a write re-sent after a takeover
			// from two replicas at once.
			sh.fr.o.Logf("fleet shard: %s written by %s, received %s, answered %d", ns, e.UserAgent,
				e.RequestReceivedTimestamp.Format("15:04:05.000"), e.ResponseStatus.Code)
		}
	}
	return n, nil
}
