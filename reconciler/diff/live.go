package diff

import (
	"context"
	"errors"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// LiveReport compares the head rendering with what each cluster holds
// now, by server-side dry-run: what merging would change on the clusters,
// including drift and out-of-band changes the repository change does not
// account for.
type LiveReport struct {
	Clusters []LiveCluster `json:"clusters"`
}

// LiveCluster is the live comparison of one cluster.
type LiveCluster struct {
	Cluster   string `json:"cluster"`
	Reachable bool   `json:"reachable"`
	// Error says why the cluster could not be compared (unreachable, no
	// kubeconfig); it is not an error of the plan.
	Error    string        `json:"error,omitempty"`
	Note     string        `json:"note,omitempty"`
	Profiles []LiveProfile `json:"profiles"`
}

// LiveProfile is the live comparison of one profile on one cluster.
type LiveProfile struct {
	Profile string `json:"profile"`
	// Withdrawn is set for a profile the cluster holds (it has an
	// inventory) that no longer selects it at head.
	Withdrawn bool         `json:"withdrawn,omitempty"`
	Error     string       `json:"error,omitempty"`
	Counts    LiveCounts   `json:"counts"`
	Objects   []LiveObject `json:"objects"`
}

// LiveCounts tallies the live comparison of a profile.
type LiveCounts struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Deleted   int `json:"deleted"`
	Unchanged int `json:"unchanged"`
	// Drifted counts the changes the repository change does not make.
	Drifted int `json:"drifted"`
}

// LiveObject is one object that merging would change on the cluster.
type LiveObject struct {
	ObjectChange
	// Drift is set when the repository change does not touch the object:
	// the cluster differs from the base revision too (changed out of band,
	// or drift not corrected yet), and merging overwrites it.
	Drift bool `json:"drift"`
}

// LiveOptions configures Live.
type LiveOptions struct {
	// Renderer renders the head pairs (the one Compare used: cache hits).
	Renderer *render.Renderer
	// Manager reaches the clusters; Live only dry-runs through it.
	Manager *apply.Manager
	// Kubeconfig returns the kubeconfig of a head cluster.
	Kubeconfig func(ctx context.Context, c *spec.Cluster) ([]byte, error)
	// Credentials, when set, reaches the clusters whose cluster.yaml names
	// a cloud provider (spec.kubeconfig.cloud) with that provider's tokens.
	Credentials *kubeconfig.Credentials
	// Concurrency is how many clusters are compared at once.
	Concurrency int
}

// Live compares the head rendering of every head cluster with the
// cluster, by server-side dry-run apply (apply's DryRun sync mode: nothing
// is changed, not even an inventory). Changes not in r (the Compare report
// of base and head) are marked as drift. Unreachable clusters are
// reported in their entry.
func Live(ctx context.Context, head Side, r *Report, opts LiveOptions) (*LiveReport, error) {
	if opts.Renderer == nil || opts.Manager == nil || opts.Kubeconfig == nil {
		return nil, errors.New("diff: Live needs a Renderer, a Manager and a Kubeconfig function")
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 2 * runtime.GOMAXPROCS(0)
	}
	l := &liveRun{head: newSide(head), opts: opts, planned: plannedChanges(r)}
	out := &LiveReport{Clusters: make([]LiveCluster, len(head.Fleet.Clusters))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for i, c := range head.Fleet.Clusters {
		g.Go(func() error {
			out.Clusters[i] = l.cluster(gctx, c)
			return gctx.Err()
		})
	}
	return out, g.Wait()
}

// liveRun is the state of one Live call.
type liveRun struct {
	head    *side
	opts    LiveOptions
	planned map[string]bool // cluster|profile|identity of every planned change
}

// plannedChanges indexes the object changes of a report.
func plannedChanges(r *Report) map[string]bool {
	out := map[string]bool{}
	for _, g := range r.Groups {
		for _, c := range g.Clusters {
			for _, pc := range g.Profiles {
				for _, o := range pc.Objects {
					out[c+"|"+pc.Profile+"|"+changeIdentity(o)] = true
				}
			}
		}
	}
	return out
}

func changeIdentity(o ObjectChange) string {
	group := ""
	if i := strings.LastIndex(o.APIVersion, "/"); i >= 0 {
		group = o.APIVersion[:i]
	}
	return group + "/" + o.Kind + "/" + o.Namespace + "/" + o.Name
}
