package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/commitstatus"
	"github.com/regatta-dev/regatta/reconciler/metrics"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/reconciler/status/history"
	"github.com/regatta-dev/regatta/reconciler/webhook"
	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/ui/access"
	"github.com/regatta-dev/regatta/verify"
)

type runFlags struct {
	repoURL, branch      string
	fleet                string
	git                  gitFlags
	statusGit            statusGitFlags
	cacheDir             string
	interval             time.Duration
	driftInterval        time.Duration
	driftWatches         bool
	render               renderOptionFlags
	managementKubeconfig string
	statusBranch         string
	statusAuthorName     string
	statusAuthorEmail    string
	statusInterval       time.Duration
	statusHistoryKeep    int
	concurrency          int
	clusterTimeout       time.Duration
	healthTimeout        time.Duration
	allowExec            bool
	metricsAddr          string
	pprofAddr            string
	webhookAddr          string
	webhookSecretFile    string
	uiAddr               string
	uiAccess             access.Flags
	once                 bool
	shutdownGrace        time.Duration
	leaderElect          bool
	leaderElectNamespace string
	logFormat, logLevel  string
	memoryLimit          string
	shard                shardFlags
	agent                agentFlags
	verify               verifyFlags
	notify               notifyFlags
	commitStatus         commitStatusFlags

	mgmt           *rest.Config // the management cluster, when configured
	owner          *ownership   // --replicas-mode shard
	leaderIdentity string       // Lease holder identity; default hostname-pid
	charts         *helm.Renderer
	onPass         func(reconciler.PassResult) // NewDaemon's hook
	leaseTimings   leaseTimings                // leader election durations; zero: the defaults
	statuses       *commitstatus.Publisher     // --commit-status-provider; nil: off
	webUI          *webUI                      // --ui-addr; nil: off
}

func newRunCommand(stdout, stderr io.Writer) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run --repo URL",
		Short: "Follow the fleet repository and keep every cluster in the state it describes",
		Long: `Clones the fleet repository and follows one branch. Every cluster is reconciled
on its own, by one of --concurrency workers: on a new commit, every
--drift-interval, when an add-on it waits for turns healthy, and on retries
with backoff. A reconciliation classifies the cluster, matches profiles,
renders, applies in dependsOn order and withdraws; it never waits for health:
health is observed off the workers and the next add-on goes on when the last
turns healthy (or the pair is Failed after its health timeout). No cluster
waits for another, and a commit that arrives mid-way is taken up at the next
add-on. Status is committed to --status-branch at most every
--status-interval, and once at shutdown.

An invalid commit is reported (status and logs, with file and line) and the last
good revision stays in force: nothing is deleted on its account. A restarted
daemon takes what the status branch recorded (the revision in force, each
cluster's last labels) and sends no apply for pairs whose inventory shows them
applied and healthy at the same render.

With --once, reconciles every cluster once on the newest revision, waits for
the health of what it applied (up to each add-on's health timeout), and exits
0 when every (profile, cluster) pair converged, 1 otherwise — for cron jobs
and tests.`,
		Example: `  regatta run --repo https://git.example.com/platform/fleet-infra.git \
      --git-username regatta --git-password-file /etc/regatta/git-token \
      --sops-age-key-file /etc/regatta/age.key --metrics-addr :8080
  regatta run --repo ./fleet-infra --once`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.agent.check(f, cmd.Flags().Changed("status-branch")); err != nil {
				return err
			}
			return runDaemon(cmd.Context(), f, stdout, stderr)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func (f *runFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.repoURL, "repo", "", "fleet repository: https://, ssh://, git@host:path, file:// or a local path (required)")
	fl.StringVar(&f.branch, "branch", repo.DefaultBranch, "branch to follow")
	fl.StringVar(&f.fleet, "fleet", "", "fleet identity scoping inventories, ownership labels and withdrawal, so that several regattas can share a cluster (a DNS label; default: derived from --repo, e.g. fleet-infra-1a2b3c4d)")
	f.git.register(fl)
	f.statusGit.register(fl)
	fl.StringVar(&f.cacheDir, "cache-dir", "", "keep the repository clone on disk here (default: in memory)")
	fl.DurationVar(&f.interval, "interval", 30*time.Second, "how often the remote branch is polled")
	fl.DurationVar(&f.driftInterval, "drift-interval", 5*time.Minute, "how often every cluster is re-classified and its drift-detected pairs checked in full (0 disables)")
	fl.BoolVar(&f.driftWatches, "drift-watches", true, "watch the objects of drift-detected profiles and correct drift within seconds; false: correct it at each --drift-interval check only, holding no watch and no idle connection per cluster (very large fleets)")
	f.render.register(fl)
	fl.StringVar(&f.managementKubeconfig, "management-kubeconfig", "", `management cluster kubeconfig for kubeconfig Secrets and leader election ("in-cluster" for the pod's service account)`)
	fl.StringVar(&f.statusBranch, "status-branch", DefaultStatusBranch, "branch for status commits; the followed branch puts status/ on it; empty disables status commits")
	fl.StringVar(&f.statusAuthorName, "status-author-name", repo.DefaultAuthorName, "author name of status commits")
	fl.StringVar(&f.statusAuthorEmail, "status-author-email", repo.DefaultAuthorEmail, "author email of status commits")
	fl.DurationVar(&f.statusInterval, "status-interval", 10*time.Second, "at most one status commit per interval, carrying every record that changed (and one at shutdown)")
	fl.IntVar(&f.statusHistoryKeep, "status-history-keep", 0, "keep the last N commits of the status branch (an agent: of its own ref) and fold the older history into the oldest kept one, checked at the first status commit and after every N more (a force push that never overwrites another writer's commit); 0 keeps the whole history")
	fl.IntVar(&f.concurrency, "concurrency", 10, "clusters reconciled at once (workers of the cluster queue)")
	fl.DurationVar(&f.clusterTimeout, "cluster-timeout", 30*time.Second, "per-request timeout for each cluster: an unreachable cluster fails within it")
	fl.DurationVar(&f.healthTimeout, "health-timeout", 5*time.Minute, "default time each add-on may take to become healthy")
	fl.BoolVar(&f.allowExec, "allow-kubeconfig-exec", false, "allow exec credential plugins and auth providers in cluster kubeconfigs (they run programs on this host)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", ":8080", "address for /metrics, /healthz and /readyz (empty disables)")
	fl.StringVar(&f.pprofAddr, "pprof-addr", "", "address for Go's profiling endpoints under /debug/pprof/ (empty, the default, disables; bind it to loopback: profiles show what the process holds)")
	fl.StringVar(&f.uiAddr, "ui-addr", "", "address for the read-only web UI, fed by this daemon's status (empty, the default, disables; off loopback it needs --ui-auth)")
	f.uiAccess.Register(fl)
	fl.StringVar(&f.webhookAddr, "webhook-addr", "", "address for the push webhook (POST any path); needs a secret")
	fl.StringVar(&f.webhookSecretFile, "webhook-secret-file", "", "file holding the webhook secret (or $REGATTA_WEBHOOK_SECRET)")
	fl.BoolVar(&f.once, "once", false, "reconcile every cluster once and wait for health, then exit 0 when every pair converged, 1 otherwise")
	fl.DurationVar(&f.shutdownGrace, "shutdown-grace", 30*time.Second, "on SIGTERM, how long the clusters being reconciled may finish before they are cancelled")
	fl.BoolVar(&f.leaderElect, "leader-elect", true, "with a management cluster, hold a Lease so only one replica acts")
	fl.StringVar(&f.leaderElectNamespace, "leader-elect-namespace", "regatta-system", "namespace of the leader election Lease")
	f.notify.register(fl)
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.shard.register(fl)
	f.agent.register(fl)
	f.verify.register(fl)
	f.commitStatus.register(fl)
	fl.StringVar(&f.memoryLimit, "memory-limit", "auto", `soft memory limit of the Go runtime, e.g. 256Mi; "auto": $GOMEMLIMIT if set, else 90% of the container's memory limit, else none with GOGC=50 (unless $GOGC is set); "off": none`)
}

func runDaemon(ctx context.Context, f *runFlags, stdout, stderr io.Writer) error {
	if f.repoURL == "" {
		return usageError("--repo is required")
	}
	if !f.driftWatches && f.driftInterval <= 0 {
		return usageError("--drift-watches=false needs a --drift-interval above 0: drift would never be corrected")
	}
	if err := f.checkStatusHistory(); err != nil {
		return err
	}
	log, err := newLogger(stderr, f.logFormat, f.logLevel)
	if err != nil {
		return err
	}
	ctrllog.SetLogger(logr.FromSlogHandler(log.Handler())) // used inside fluxcd/pkg/ssa
	limit, err := setMemoryLimit(f.memoryLimit)
	if err != nil {
		return err
	}
	log.Info("memory limit", "limit", limit)
	if f.mgmt, err = managementConfig(f.managementKubeconfig); err != nil {
		return err
	}
	if err := f.shard.check(f); err != nil {
		return err
	}
	d, m, err := f.build(ctx, log)
	if err != nil {
		return err
	}
	if err := f.serve(ctx, m, d, log); err != nil {
		return err
	}
	if f.once {
		res, err := d.RunOnce(ctx)
		f.flushStatuses(ctx, log)
		fmt.Fprintf(stdout, "revision %s: converged=%v\n", res.Snapshot.Fleet.SourceRevision, res.Converged)
		if errors.Is(err, reconciler.ErrUnconverged) {
			return &ExitError{Code: ExitFailed, Err: err}
		}
		return err
	}
	if f.owner != nil {
		return f.owner.runSharded(ctx, d)
	}
	return f.lead(ctx, f.leaseConfig(), log, func() { m.SetReady(true) }, d.Run)
}

// verifyOptions reads the signature check's flags; status/ is exempt when
// status commits go to the followed branch (they are regatta's own, and
// unsigned).
func (f *runFlags) verifyOptions() (*verify.Options, error) {
	if f.statusBranch != "" && f.statusBranch == f.branch {
		return f.verify.options(status.Dir)
	}
	return f.verify.options()
}

// checkStatusHistory refuses a retention the daemon could not apply.
func (f *runFlags) checkStatusHistory() error {
	switch {
	case f.statusHistoryKeep < 0:
		return usageError("--status-history-keep %d: a number of commits, 0 to keep the whole history", f.statusHistoryKeep)
	case f.statusHistoryKeep > 0 && f.statusBranch == "":
		return usageError("--status-history-keep needs a status branch: --status-branch is empty")
	case f.statusHistoryKeep > 0 && f.statusBranch == f.branch:
		return usageError("--status-history-keep: the status branch is the followed branch %s, whose history is the fleet's own and is never folded: "+
			"give status a branch of its own (--status-branch) or drop --status-history-keep", f.branch)
	}
	return nil
}

// build wires the daemon from the flags.
func (f *runFlags) build(ctx context.Context, log *slog.Logger) (*reconciler.Daemon, *metrics.Metrics, error) {
	auth, err := f.git.auth()
	if err != nil {
		return nil, nil, err
	}
	if f.statuses, err = f.commitStatus.publisher(f.repoURL, f.statusBranch, f.agent.cluster != "", log); err != nil {
		return nil, nil, err
	}
	pushAuth, err := f.statusGit.auth()
	if err != nil {
		return nil, nil, err
	}
	vo, err := f.verifyOptions()
	if err != nil {
		return nil, nil, err
	}
	// Every-commit checks walk the history since the last verified
	// revision: keep it, rather than fetch it again after each shallow
	// fetch or compaction.
	src, err := repo.NewSource(repo.Options{URL: f.repoURL, Branch: f.branch, Auth: auth, PushAuth: pushAuth, Dir: f.cacheDir, Logger: log,
		FullHistory: vo != nil && vo.Mode == verify.ModeEvery})
	if err != nil {
		return nil, nil, &ExitError{Code: ExitUsage, Err: err}
	}
	if f.charts, err = f.render.charts(); err != nil {
		return nil, nil, err
	}
	renderer, err := f.render.rendererWith(f.charts)
	if err != nil {
		return nil, nil, err
	}
	keys, _ := f.render.keyring()
	ao := f.applyOptions()
	ao.Client.UserAgent = f.userAgent(ao.Client.UserAgent)
	if f.mgmt != nil {
		f.mgmt = rest.CopyConfig(f.mgmt)
		f.mgmt.UserAgent = ao.Client.UserAgent
	}
	mgmt, err := managementSecrets(f.mgmt)
	if err != nil {
		return nil, nil, err
	}
	m := metrics.New()
	if f.owner, err = f.member(m, log); err != nil {
		return nil, nil, err
	}
	var own reconciler.Ownership
	if f.owner != nil {
		own = f.owner
	}
	if ao.Fleet, err = fleetIdentity(f.fleet, f.repoURL); err != nil {
		return nil, nil, err
	}
	log.Info("fleet identity", "fleet", ao.Fleet.ID, "adoptsUnlabelled", ao.Fleet.Legacy)
	watch := repo.DefaultWatchOptions()
	watch.Interval = f.interval
	do := reconciler.DaemonOptions{
		Source:         src,
		Watch:          watch,
		DriftInterval:  f.driftInterval,
		StatusBranch:   f.statusBranch,
		StatusAuthor:   repo.Signature{Name: f.statusAuthorName, Email: f.statusAuthorEmail},
		StatusInterval: f.statusInterval,
		ShutdownGrace:  f.shutdownGrace,
		Ownership:      own,
		OnPass:         f.onPass,
	}
	if vo != nil {
		do.Verify = verify.New(src, *vo)
		log.Info("commit signatures are checked", "mode", vo.Mode, "openpgpKeys", len(vo.Keys.PGP), "sshSigners", len(vo.Keys.SSH), "policy", f.verify.policyFile)
	}
	observe, attach, err := f.notifier(ctx, log, m)
	if err != nil {
		return nil, nil, err
	}
	f.agent.pullOptions(&do, src, f, log)
	if f.statusHistoryKeep > 0 {
		do.StatusHistory = history.New(src, f.statusHistoryKeep, log)
	}
	// Each status commit's snapshot of the whole fleet goes to the
	// notifier and, with --commit-status-provider, to the commit status
	// Publisher (issue 52), both off the daemon's path. The daemon calls
	// OnStatus only in the process that writes the fleet's status: never
	// an agent, and of a sharded fleet the replica that owns the fleet.
	do.OnStatus = observe
	if pub := f.statuses; pub != nil {
		startPublisher(ctx, pub)
		do.OnStatus = func(s status.Snapshot) { observe(s); pub.Observe(s) }
	}
	if f.webUI, err = f.newWebUI(ctx, log); err != nil {
		return nil, nil, err
	}
	do.OnStatus = f.webUI.observe(do.OnStatus)
	d := reconciler.Build(ctx, reconciler.Setup{
		Daemon: do,
		Apply:  ao,
		Reconciler: reconciler.Options{
			Renderer:       renderer,
			Lua:            lua.NewRunner(lua.Options{}),
			Keys:           keys,
			Management:     mgmt,
			Metrics:        m,
			Log:            log,
			Concurrency:    f.concurrency,
			ClusterTimeout: f.clusterTimeout,
			HealthTimeout:  f.healthTimeout,
		},
	})
	attach(d)
	if f.webUI != nil {
		f.webUI.srv.Authority(speakerWords(d))
	}
	return d, m, nil
}

func (f *runFlags) applyOptions() apply.Options {
	o := apply.DefaultOptions()
	o.Client.AllowExec = f.allowExec
	o.Client.Timeout = f.clusterTimeout
	o.HealthTimeout = f.healthTimeout
	o.DriftIntervalOnly = !f.driftWatches
	return o
}

// serve starts the metrics and webhook listeners; they stop with ctx.
func (f *runFlags) serve(ctx context.Context, m *metrics.Metrics, d *reconciler.Daemon, log *slog.Logger) error {
	if f.metricsAddr != "" {
		if err := listen(ctx, f.metricsAddr, m.Handler(), log, "metrics"); err != nil {
			return err
		}
	}
	if f.pprofAddr != "" {
		if err := listen(ctx, f.pprofAddr, pprofHandler(), log, "pprof"); err != nil {
			return err
		}
	}
	if f.webUI != nil {
		if err := f.webUI.serve(ctx, f.uiAddr, f.interval, log); err != nil {
			return err
		}
	}
	if f.webhookAddr == "" {
		return nil
	}
	secret := os.Getenv("REGATTA_WEBHOOK_SECRET")
	if f.webhookSecretFile != "" {
		b, err := os.ReadFile(f.webhookSecretFile)
		if err != nil {
			return usageError("--webhook-secret-file: %v", err)
		}
		secret = trimNewline(string(b))
	}
	if secret == "" {
		return usageError("--webhook-addr needs a secret: --webhook-secret-file or $REGATTA_WEBHOOK_SECRET")
	}
	h := &webhook.Handler{Secret: []byte(secret), Branch: f.branch, Trigger: func(string) { d.Trigger() }, Log: log}
	return listen(ctx, f.webhookAddr, h, log, "webhook")
}

// pprofHandler serves net/http/pprof's endpoints on a mux of its own (not
// http.DefaultServeMux, which the metrics listener never uses either).
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

func listen(ctx context.Context, addr string, h http.Handler, log *slog.Logger, what string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageError("%s address %s: %v", what, addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	context.AfterFunc(ctx, func() { srv.Close() })
	log.Info("listening", "what", what, "addr", ln.Addr().String())
	return nil
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError("--log-level must be debug, info, warn or error, got %q", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageError("--log-format must be text or json, got %q", format)
}
