package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// fleetRun is the state of one fleet size's run.
type fleetRun struct {
	o       FleetOptions
	le      *logicalEnv
	res     *FleetRun
	fleet   ScaleFleet
	git     *GitRepo
	child   *Child
	watch   *markerWatch
	cancel  context.CancelFunc
	webhook string
	secret  string
	// bg are the API servers' own requests per minute, before regatta.
	bg RequestCounts
	// changeRev and changeDone are the change's revision and when its
	// last cluster had it.
	changeRev  string
	changeDone time.Time
	// changeFrom is the change's window opened at its push, closed by
	// the status commit that carries it.
	changeFrom *changeWindow
	// converged counts regatta's converged passes before the last push.
	converged float64
	// profiled closes when the change's CPU profile is written (nil: none
	// taken). The status commit is timed meanwhile; the idle window waits.
	profiled <-chan struct{}
}

const fleetWebhookSecret = "bench-webhook-secret"

// start commits the clusters alone, counts the API servers' own requests,
// starts the marker watches and `regatta run`, and waits for its first
// converged pass.
func (fr *fleetRun) start(ctx context.Context) error {
	var err error
	if fr.git, err = StartGitRepo(ctx, filepath.Join(fr.o.Dir, "git")); err != nil {
		return err
	}
	if _, err := fr.git.Commit(ctx, "clusters", fr.fleet.Files(0, false)); err != nil {
		return err
	}
	if fr.bg, err = fr.le.background(ctx, fr.o.Background); err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	fr.cancel = cancel
	if fr.watch, err = watchMarkers(wctx, fr.le.Servers); err != nil {
		return err
	}
	begin := time.Now()
	if err := fr.startChild(); err != nil {
		return err
	}
	if err := fr.child.WaitPasses(ctx, 1, 1, 20*time.Minute, 200*time.Millisecond); err != nil {
		return err
	}
	fr.res.StartSecs = time.Since(begin).Seconds()
	fr.o.Logf("fleet %d: regatta run connected to every cluster (first pass, no profiles) in %.1fs", fr.o.Clusters, fr.res.StartSecs)
	return nil
}

// startChild starts `regatta run` with the kubeconfig Secrets in the
// management cluster and a push webhook.
func (fr *fleetRun) startChild() error {
	return fr.startChildIn(filepath.Join(fr.o.Dir, "regatta"))
}

// startChildIn starts `regatta run` in dir with more flags.
func (fr *fleetRun) startChildIn(dir string, extra ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	secretFile := filepath.Join(dir, "webhook-secret")
	if err := os.WriteFile(secretFile, []byte(fleetWebhookSecret), 0o600); err != nil {
		return err
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	fr.webhook = "http://" + addr + "/"
	args := append([]string{"--management-kubeconfig", fr.le.MgmtKubeconfig, "--interval", "1h",
		"--webhook-addr", addr, "--webhook-secret-file", secretFile}, fr.o.Args...)
	fr.child, err = StartChild(ChildOptions{Regatta: fr.o.Bins.Regatta, RepoURL: fr.git.URL(),
		DriftInterval: fr.o.DriftInterval, Dir: dir, Args: append(args, extra...)})
	return err
}

func (fr *fleetRun) stop() {
	if fr.child != nil {
		fr.child.Stop()
	}
	if fr.cancel != nil {
		fr.cancel()
	}
	if fr.git != nil {
		fr.git.Close()
	}
}

// push commits files and tells regatta through its webhook, as a Git
// host would; it returns the revision and when the push was done.
func (fr *fleetRun) push(ctx context.Context, msg string, files map[string]string) (string, time.Time, error) {
	var err error
	if fr.converged, _, err = fr.child.Passes(ctx); err != nil {
		return "", time.Time{}, err
	}
	rev, err := fr.git.Commit(ctx, msg, files)
	if err != nil {
		return "", time.Time{}, err
	}
	at := time.Now()
	return rev, at, fr.notify(ctx)
}

// notify posts a push event to regatta's webhook, as a Git host would.
func (fr *fleetRun) notify(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fr.webhook, bytes.NewReader([]byte(`{"ref":"refs/heads/main"}`)))
	if err != nil {
		return err
	}
	req.Header.Set("X-Gitlab-Token", fleetWebhookSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("webhook: %s", resp.Status)
	}
	return nil
}

// within is how long a rollout may take: generous, so a slow one is
// measured rather than cut.
func (fr *fleetRun) within() time.Duration {
	return 10*time.Minute + time.Duration(fr.o.Clusters)*300*time.Millisecond
}

// rollout commits both profiles and times each cluster getting them.
func (fr *fleetRun) rollout(ctx context.Context) error {
	_, at, err := fr.push(ctx, "profiles", fr.fleet.Files(0, true))
	if err != nil {
		return err
	}
	ts, err := fr.watch.wait(ctx, fr.le.Names, map[string]string{FleetDriftProfile: "0", FleetKustomizeProfile: "0"}, at, fr.within())
	fr.res.First = NewLatency(ts, fr.o.Clusters)
	fr.o.Logf("fleet %d: first rollout p50 %.1fs p99 %.1fs last %.1fs", fr.o.Clusters, fr.res.First.P50, fr.res.First.P99, fr.res.First.Last)
	if err != nil {
		return err
	}
	return fr.waitConverged(ctx)
}

// waitConverged waits for a converged pass after the last push.
func (fr *fleetRun) waitConverged(ctx context.Context) error {
	return fr.child.WaitPasses(ctx, 0, fr.converged+1, fr.within(), 500*time.Millisecond)
}

// change commits a one-line change of profile fa and times each cluster
// getting it.
func (fr *fleetRun) change(ctx context.Context) error {
	from, err := fr.openChange(ctx)
	if err != nil {
		return err
	}
	fr.changeFrom = from
	fr.profiled = fr.profileChange(ctx)
	rev, at, err := fr.push(ctx, "one-line change", fr.fleet.Files(1, true))
	if err != nil {
		return err
	}
	fr.changeRev = rev
	ts, err := fr.watch.wait(ctx, fr.le.Names, map[string]string{FleetDriftProfile: "1"}, at, fr.within())
	fr.res.Change = NewLatency(ts, fr.o.Clusters)
	fr.changeDone = at.Add(time.Duration(fr.res.Change.Last * float64(time.Second)))
	fr.o.Logf("fleet %d: change p50 %.1fs p99 %.1fs last %.1fs", fr.o.Clusters, fr.res.Change.P50, fr.res.Change.P99, fr.res.Change.Last)
	if err != nil {
		return err
	}
	if err := fr.waitConverged(ctx); err != nil {
		return err
	}
	if fr.res.Converged, err = sampleProc(ctx, fr.child, fr.le.Ports()); err != nil {
		return err
	}
	if fr.o.Status {
		return nil // the status commit closes the window
	}
	return fr.closeChange(ctx)
}

// changeWindow is where regatta and the API servers stood at the change's
// push.
type changeWindow struct {
	requests     RequestCounts
	cpu, servers time.Duration
	allocated    float64
}

// openChange reads where regatta and the API servers stand.
func (fr *fleetRun) openChange(ctx context.Context) (*changeWindow, error) {
	before, err := fr.le.scrape(ctx)
	if err != nil {
		return nil, err
	}
	cpu, err := ProcCPU(fr.child.Pid())
	if err != nil {
		return nil, err
	}
	servers := fr.le.CPU()
	alloc, err := fr.allocated(ctx)
	if err != nil {
		return nil, err
	}
	return &changeWindow{requests: before, cpu: cpu, servers: servers, allocated: alloc}, nil
}

// closeChange charges the change with what regatta and the API servers
// did since its push: up to the status commit that carries it, so that
// every fleet size pays for its status commits (a short change ended
// before its commit, a long one held several).
func (fr *fleetRun) closeChange(ctx context.Context) error {
	from := fr.changeFrom
	cpu, err := ProcCPU(fr.child.Pid())
	if err != nil {
		return err
	}
	fr.res.ChangeCPU, fr.res.ChangeServersCPU = (cpu - from.cpu).Seconds(), (fr.le.CPU() - from.servers).Seconds()
	alloc, err := fr.allocated(ctx)
	if err != nil {
		return err
	}
	fr.res.ChangeAlloc = alloc - from.allocated
	fr.res.ChangeRequests, err = fr.le.requestsSince(ctx, from.requests)
	return err
}

// allocated is regatta's bytes allocated since it started.
func (fr *fleetRun) allocated(ctx context.Context) (float64, error) {
	m, err := fr.child.Metrics(ctx)
	if err != nil {
		return 0, err
	}
	return m["go_memstats_alloc_bytes_total"], nil
}

// changeProfileSecs is how long the CPU profile of the change runs.
const changeProfileSecs = 30

// profileChange records regatta's CPU profile over the change's first
// changeProfileSecs seconds into the run's folder, for the report's reader
// (what a fleet-wide change costs regatta, by function); the channel closes
// when it is written.
func (fr *fleetRun) profileChange(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		path := filepath.Join(fr.o.Dir, "regatta.change.cpu.pprof")
		if err := fr.child.SaveProfile(ctx, fmt.Sprintf("profile?seconds=%d", changeProfileSecs), path); err != nil {
			fr.o.Logf("fleet %d: %v", fr.o.Clusters, err)
		}
	}()
	return done
}

// idle counts the API servers' requests and regatta's CPU over the idle
// window.
func (fr *fleetRun) idle(ctx context.Context) error {
	if fr.profiled != nil {
		<-fr.profiled // the change's CPU profile is written, and off the window
	}
	before, err := fr.le.scrape(ctx)
	if err != nil {
		return err
	}
	mgmt0, err := ScrapeRequests(ctx, fr.le.Mgmt.RESTConfig())
	if err != nil {
		return err
	}
	_, passes0, err := fr.child.Passes(ctx)
	if err != nil {
		return err
	}
	cpu0, err := ProcCPU(fr.child.Pid())
	if err != nil {
		return err
	}
	if err := sleepCtx(ctx, fr.o.Idle); err != nil {
		return err
	}
	cpu1, err := ProcCPU(fr.child.Pid())
	if err != nil {
		return err
	}
	_, passes1, err := fr.child.Passes(ctx)
	if err != nil {
		return err
	}
	after, err := fr.le.scrape(ctx)
	if err != nil {
		return err
	}
	mgmt1, err := ScrapeRequests(ctx, fr.le.Mgmt.RESTConfig())
	if err != nil {
		return err
	}
	minutes := fr.o.Idle.Minutes()
	fr.res.IdleMgmt = mgmt1.Sub(mgmt0).Scale(1 / minutes / float64(fr.o.Clusters)).Rows()
	load := newIdleLoad(before, after, fr.bg, minutes, fr.o.Clusters)
	fr.res.IdleRequests, fr.res.IdleWatches, fr.res.IdleOther = load.Rows, load.Watches, load.Other
	fr.res.IdleCPUPerDrift = (cpu1 - cpu0).Seconds() / (fr.o.Idle.Seconds() / fr.o.DriftInterval.Seconds())
	fr.res.IdlePasses = passes1 - passes0
	fr.res.Idle, err = sampleProc(ctx, fr.child, fr.le.Ports())
	for _, name := range []string{"heap", "goroutine"} {
		// What an idle cluster costs, for the report's reader to look into.
		if perr := fr.child.SaveProfile(ctx, name, filepath.Join(fr.o.Dir, "regatta.idle."+name+".pprof")); perr != nil {
			fr.o.Logf("fleet %d: %v", fr.o.Clusters, perr)
		}
	}
	fr.o.Logf("fleet %d: idle %s: %.2f requests per cluster per minute (%.2f watches), CPU %.2fs per drift interval, RSS %s",
		fr.o.Clusters, fr.o.Idle, fr.res.IdleOther+fr.res.IdleWatches, fr.res.IdleWatches, fr.res.IdleCPUPerDrift, mib(fr.res.Idle.RSS))
	return err
}

// restart stops regatta and starts a fresh one on the converged fleet:
// the time to its first converged pass, its applies and the clusters'
// writes meanwhile.
func (fr *fleetRun) restart(ctx context.Context) error {
	if !fr.o.Restart {
		return nil
	}
	fr.child.Stop()
	begin := time.Now()
	if err := fr.startChildIn(filepath.Join(fr.o.Dir, "regatta-restart")); err != nil {
		return err
	}
	r := &FleetRestart{}
	fr.res.Restart = r
	if err := fr.child.WaitPasses(ctx, 1, 1, fr.within(), 200*time.Millisecond); err != nil {
		return err
	}
	r.Secs = time.Since(begin).Seconds()
	m, err := fr.child.Metrics(ctx)
	if err != nil {
		return err
	}
	for k, v := range m {
		if strings.HasPrefix(k, "regatta_applies_total{") {
			r.Applies += v
		}
	}
	if r.Writes, err = fr.auditWrites(begin); err != nil {
		return err
	}
	r.RSS, _, _ = ProcStatus(fr.child.Pid())
	fr.o.Logf("fleet %d: restart confirmed every cluster in %.1fs: %v applies, writes %v", fr.o.Clusters, r.Secs, r.Applies, r.Writes)
	return nil
}

// auditWrites counts the writes of the clusters' ServiceAccounts in the
// API servers' audit logs since t, by verb and resource.
func (fr *fleetRun) auditWrites(t time.Time) (map[string]int, error) {
	out := map[string]int{}
	for _, s := range fr.le.Servers {
		evs, err := testenv.ReadAuditLog(s.AuditLog())
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			if e.StageTimestamp.Before(t) || !clusterWrite(e) {
				continue
			}
			out[e.Verb+" "+e.ObjectRef.Resource]++
		}
	}
	return out, nil
}

// clusterWrite reports whether an audit event is a write (not a dry run)
// by a logical cluster's ServiceAccount (system:serviceaccount:s-<name>:…).
func clusterWrite(e testenv.AuditEvent) bool {
	return strings.HasPrefix(e.User.Username, "system:serviceaccount:s-") && !strings.Contains(e.RequestURI, "dryRun=")
}
