package reconciler

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/events"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig/cloud"
	"github.com/regatta-dev/regatta/reconciler/metrics"
	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/sops"
)

// Options configures a Reconciler.
type Options struct {
	Apply    *apply.Manager
	Renderer *render.Renderer
	Lua      *lua.Runner
	// Keys decrypts SOPS-encrypted kubeconfig Secrets in cluster folders.
	Keys *sops.Keyring
	// Management reads kubeconfig Secrets from a management cluster.
	Management kubeconfig.SecretGetter
	// Credentials keeps the renewing tokens of cloud clusters and of
	// renewed ServiceAccount tokens. Default: one bounded by Build's
	// context.
	Credentials *kubeconfig.Credentials
	Metrics     *metrics.Metrics
	Log         *slog.Logger
	// Concurrency is how many clusters are reconciled at once.
	Concurrency int
	// ClusterTimeout bounds reaching and classifying one cluster.
	ClusterTimeout time.Duration
	// HealthTimeout is the default per-add-on health timeout.
	HealthTimeout time.Duration
	// Now is the clock progressive rollouts read (windows, soaks); nil is
	// time.Now. Tests set it to a known instant.
	Now func() time.Time

	// skipTenantGuard lets tests send a tenant's forbidden objects to the
	// cluster, to show its RBAC refuses them under impersonation.
	skipTenantGuard bool
}

// DefaultOptions returns 10 clusters at a time, a 30 s cluster timeout and
// a 5 m health timeout.
func DefaultOptions() Options {
	return Options{Concurrency: 10, ClusterTimeout: 30 * time.Second, HealthTimeout: 5 * time.Minute}
}

// Reconciler reconciles clusters. What it knows carries over between
// reconciliations: the revision in force (the last that loaded and
// validated) and each cluster's last known version and classifier labels.
type Reconciler struct {
	opts Options
	log  *slog.Logger

	mu    sync.Mutex
	good  *revision               // last revision that loaded and validated
	known map[string]knownCluster // last facts per cluster
	// identities are the cluster identities entries reach (pass_identity.go).
	identities map[string]identityRecord
	lastPairs  map[string]map[string]struct{} // pairs reported, for metrics clean-up
	events     *events.Manager                // watches of event profiles
	rollouts   *rollouts                      // progressive rollouts, by profile
	agent      *AgentCluster                  // pull mode: the agent's own cluster
	// render cache counts at the last pass, to export deltas
	cacheHits, cacheMisses uint64
}

// knownCluster is what the last successful classification found.
type knownCluster struct {
	version    string
	classified map[string]plan.Classified // by classifier name
}

// New returns a Reconciler.
func New(opts Options) *Reconciler {
	d := DefaultOptions()
	if opts.Concurrency <= 0 {
		opts.Concurrency = d.Concurrency
	}
	if opts.ClusterTimeout <= 0 {
		opts.ClusterTimeout = d.ClusterTimeout
	}
	if opts.HealthTimeout <= 0 {
		opts.HealthTimeout = d.HealthTimeout
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Lua == nil {
		opts.Lua = lua.NewRunner(lua.Options{})
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Credentials == nil {
		// Build passes its context; a bare Reconciler's token fetches
		// are bounded by their own timeout only.
		opts.Credentials = kubeconfig.NewCredentials(context.Background(), cloud.Options{})
	}
	return &Reconciler{
		opts:       opts,
		log:        opts.Log,
		known:      map[string]knownCluster{},
		identities: map[string]identityRecord{},
		lastPairs:  map[string]map[string]struct{}{},
		events:     events.NewManager(events.Options{Lua: opts.Lua, Log: opts.Log}),
		rollouts:   newRollouts(opts.Metrics, opts.Log, opts.Now),
	}
}

// allStates lists the pair states, for the pair-state metric.
var allStates = []string{
	status.StateApplied, status.StateProgressing, status.StateWaitingForDependency, status.StateFailed,
	status.StateConflict, status.StateDryRun, status.StateWithdrawn, status.StatePaused,
	status.StateWaitingForRollout,
}

// identityRecord is what the pass of another entry, or a look-up for it,
// found the entry reaches: its cluster identity, or failed.
type identityRecord struct {
	uid    string
	failed string // the revision a look-up failed at: not tried again on it
	// registered is the client and revision the entry's own pass found
	// its registration with: passes on both (drift checks, retries), or on
	// a revision with the same clusters folder (tree hash clusters), do not
	// read it again.
	registered *apply.Client
	rev        string
	clusters   string
}
