package bench

import (
	"context"
	"time"
)

// FleetResult is the fleet phase: the calibration (the same small fleet
// on a server per cluster, then on one server) and each fleet size.
type FleetResult struct {
	Calibration []FleetRun `json:"calibration,omitempty"`
	Runs        []FleetRun `json:"runs"`
	// Shard is the shard run: replicas sharing the fleet, one killed.
	Shard *FleetShard `json:"shard,omitempty"`
	// Flux are Flux's kustomize-controller's runs on the same fleets.
	Flux []FleetFluxRun `json:"flux,omitempty"`
	// NoWatches are regatta's runs with --drift-watches=false at Flux's
	// sizes: drift corrected at the interval only, as Flux corrects it.
	NoWatches []FleetRun `json:"withoutDriftWatches,omitempty"`
}

// FleetOptions configures one run of the fleet phase (one fleet size).
type FleetOptions struct {
	// Clusters is the number of logical clusters; PerServer how many share
	// one kube-apiserver (1: a server each, the calibration's reference).
	Clusters, PerServer int
	// Objects per profile (two profiles per cluster).
	Objects int
	// DriftInterval is regatta's --drift-interval; Idle the idle window
	// measured after convergence; Background the window before regatta
	// starts in which the API servers' own requests are counted.
	DriftInterval, Idle, Background time.Duration
	// SetupWorkers bounds the namespace users created at once.
	SetupWorkers int
	// Restart and Status measure a restart and the status commit.
	Restart, Status bool
	Bins            *Binaries
	Dir             string
	Logf            func(string, ...any)
	// Args are more flags of `regatta run`.
	Args []string
}

// FleetRun is what one run of the fleet phase measured.
type FleetRun struct {
	Clusters  int `json:"clusters"`
	Servers   int `json:"apiServers"`
	PerServer int `json:"clustersPerServer"`
	Objects   int `json:"objectsPerCluster"`
	// Args are the flags of `regatta run` beyond its defaults (-daemon-args):
	// an experiment, left out of the targets.
	Args []string `json:"regattaArgs,omitempty"`
	// ServersSecs starts the API servers; UsersSecs creates the namespace
	// users and kubeconfig Secrets (setup, not regatta's).
	ServersSecs float64 `json:"serversSeconds"`
	UsersSecs   float64 `json:"usersSeconds"`
	// StartSecs is from starting `regatta run` on the clusters alone (no
	// profile yet) to its first converged pass: it connects to each.
	StartSecs float64 `json:"startSeconds"`
	// First is the commit of the two profiles → each cluster has both;
	// Change a one-line change of profile fa → each cluster has it.
	First  Latency `json:"firstRollout"`
	Change Latency `json:"change"`
	// ChangeRequests are the fleet API servers' requests from the change's
	// push to the status commit that carries it (in results up to fc553de:
	// to regatta's converged pass after the push), per cluster.
	ChangeRequests float64 `json:"changeRequestsPerCluster,omitempty"`
	// ChangeCPU and ChangeServersCPU are regatta's and the fleet's API
	// servers' (with etcd) CPU seconds over the same window: what the
	// change cost, apart from how busy the machine was.
	ChangeCPU        float64 `json:"changeCpuSeconds,omitempty"`
	ChangeServersCPU float64 `json:"changeServersCpuSeconds,omitempty"`
	// ChangeAlloc is what regatta allocated over the same window (its
	// go_memstats_alloc_bytes_total): its work in the change, in a unit
	// that does not depend on how busy the machine was.
	ChangeAlloc float64 `json:"changeAllocBytes,omitempty"`
	// Converged is regatta after the change converged; Idle after the
	// idle window.
	Converged ProcSample `json:"converged"`
	Idle      ProcSample `json:"idle"`
	IdleSecs  float64    `json:"idleSeconds"`
	DriftSecs float64    `json:"driftIntervalSeconds"`
	// IdleRequests are requests per cluster per minute in the idle window,
	// the API servers' own (counted before regatta started) subtracted;
	// IdleWatches and IdleOther split their total into WATCH requests (a
	// watch re-opened) and the rest.
	IdleRequests []RequestRow `json:"idleRequestsPerClusterPerMinute"`
	IdleWatches  float64      `json:"idleWatchesPerClusterPerMinute"`
	IdleOther    float64      `json:"idleOtherPerClusterPerMinute"`
	// IdleMgmt are the management cluster's requests per cluster per
	// minute (kubeconfig Secrets, regatta's leases; its own included).
	IdleMgmt []RequestRow `json:"idleManagementRequestsPerClusterPerMinute,omitempty"`
	// IdleCPUPerDrift is regatta's CPU seconds per drift interval of the
	// idle window; IdlePasses the passes it finished in the window.
	IdleCPUPerDrift float64 `json:"idleCpuSecondsPerDriftInterval"`
	IdlePasses      float64 `json:"idlePasses"`
	// APIServersRSS and EtcdRSS are the fleet's servers at the end.
	APIServersRSS int64         `json:"apiServersRssBytes"`
	EtcdRSS       int64         `json:"etcdRssBytes"`
	Restart       *FleetRestart `json:"restart,omitempty"`
	Status        *StatusCommit `json:"status,omitempty"`
	Err           string        `json:"error,omitempty"`
	// Measured is the commit and date of a run carried over from an
	// earlier results.json (nil: this run).
	Measured *PhaseRun `json:"measured,omitempty"`
}

// FleetRestart is a fresh `regatta run` on the converged fleet.
type FleetRestart struct {
	// Secs is from its start to its first converged pass (every cluster
	// confirmed).
	Secs float64 `json:"seconds"`
	// Applies is regatta_applies_total of the new process; Writes the
	// fleet's audit-logged writes by the clusters' ServiceAccounts from its
	// start, by verb and resource.
	Applies float64        `json:"applies"`
	Writes  map[string]int `json:"writes"`
	RSS     int64          `json:"rssBytes"`
}

// StatusCommit is the status commit that carries the change.
type StatusCommit struct {
	// Secs is from the last cluster having the change to the status
	// branch carrying it (every pair Applied at the change's revision).
	Secs float64 `json:"seconds"`
	// TreeBytes and Files are the status tree; ChangedFiles the files the
	// commit changed.
	TreeBytes    int64 `json:"treeBytes"`
	Files        int   `json:"files"`
	ChangedFiles int   `json:"changedFiles"`
	// DashboardBytes and DashboardLines are status/README.md; SummaryLine
	// is the line of its pair counts, TableLine the line of its first
	// cluster row, ProblemsLine of its problems (0: none).
	DashboardBytes int `json:"dashboardBytes"`
	DashboardLines int `json:"dashboardLines"`
	SummaryLine    int `json:"summaryLine"`
	TableLine      int `json:"tableLine"`
	ProblemsLine   int `json:"problemsLine,omitempty"`
}

// RunFleet runs one fleet size: API servers, namespace users, then
// `regatta run` through the first rollout, a fleet-wide change, the idle
// window, the status commit and a restart.
func RunFleet(ctx context.Context, o FleetOptions) (*FleetRun, error) {
	servers := ServersFor(o.Clusters, o.PerServer)
	res := &FleetRun{Clusters: o.Clusters, Servers: servers, PerServer: o.PerServer, Objects: 2 * o.Objects, Args: o.Args,
		IdleSecs: o.Idle.Seconds(), DriftSecs: o.DriftInterval.Seconds()}
	le, serversSecs, usersSecs, err := startFleetEnv(ctx, o, servers, regattaNamespace)
	res.ServersSecs, res.UsersSecs = serversSecs, usersSecs
	if err != nil {
		return res, err
	}
	defer le.Stop()
	o.Logf("fleet %d: %d API servers in %.1fs", o.Clusters, servers, res.ServersSecs)
	o.Logf("fleet %d: namespace users and kubeconfig Secrets in %.1fs", o.Clusters, res.UsersSecs)
	fr := &fleetRun{o: o, le: le, res: res, fleet: ScaleFleet{Clusters: le.Names, Objects: o.Objects}}
	defer fr.stop()
	for _, step := range []func(context.Context) error{fr.start, fr.rollout, fr.change, fr.status, fr.idle, fr.restart} {
		if err := step(ctx); err != nil {
			return res, err
		}
	}
	res.APIServersRSS, res.EtcdRSS = le.RSS()
	return res, nil
}
