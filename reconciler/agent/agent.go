// Package agent is pull mode's Git side: where the agent of a pulled
// cluster commits its status (its own ref, StatusRef) and how the other
// processes read it back (Refs), taking from each ref its cluster's record
// only. A ref is written by one agent and read by everyone; nothing read
// from it is ever taken as desired state.
package agent

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/spec"
)

// RefPrefix is the branch prefix of the agents' status refs.
const RefPrefix = "regatta-status/"

// StatusRef is the branch the agent of a pulled cluster commits its
// status to: refs/heads/regatta-status/<cluster>, an orphan branch
// holding status/fleet.yaml and status/clusters/<cluster>.yaml only.
func StatusRef(cluster string) string { return RefPrefix + cluster }

// MaxRecord bounds the size of a record read from an agent's ref.
const MaxRecord = 4 << 20

// Record returns cluster's record from the status tree of its agent's
// ref, marked pulled, and the files of other clusters' records it holds,
// which are ignored (an agent speaks for its own cluster only). found is
// false when the tree holds no record of the cluster.
func Record(tree fs.FS, cluster string) (rec status.ClusterStatus, found bool, ignored []string, err error) {
	entries, _ := fs.ReadDir(tree, status.ClustersDir)
	own := status.ClusterFile(cluster)
	for _, e := range entries {
		if p := path.Join(status.ClustersDir, e.Name()); p != own {
			ignored = append(ignored, p)
		}
	}
	info, err := fs.Stat(tree, own)
	switch {
	case err != nil:
		return rec, false, ignored, nil
	case !info.Mode().IsRegular() || info.Size() > MaxRecord:
		return rec, false, ignored, fmt.Errorf("%s: not a regular file of at most %d bytes", own, MaxRecord)
	}
	b, err := fs.ReadFile(tree, own)
	if err != nil {
		return rec, false, ignored, err
	}
	if err := yaml.Unmarshal(b, &rec); err != nil {
		return rec, false, ignored, fmt.Errorf("%s: %w", own, err)
	}
	if rec.Cluster != cluster {
		return status.ClusterStatus{}, false, append(ignored, own), fmt.Errorf("%s: names cluster %q, not %q", own, rec.Cluster, cluster)
	}
	rec.Mode = spec.ModePull
	return rec, true, ignored, nil
}

// Missing is the record shown for a pulled cluster whose agent has
// committed nothing (readable) yet.
func Missing(cluster, why string) status.ClusterStatus {
	return status.ClusterStatus{Cluster: cluster, Mode: spec.ModePull,
		Error: fmt.Sprintf("no status from its agent: %s (is `regatta run --cluster %s` running in the cluster, allowed to push %s?)", why, cluster, StatusRef(cluster))}
}

// Refs reads the records of clusters other processes reconcile from the
// fleet repository: a pulled cluster's from its agent's ref, the pushed
// clusters' from the central daemon's status branch. It implements
// reconciler.Peers.
type Refs struct {
	Source *repo.Source
	// StatusBranch is the central daemon's status branch (pushed
	// clusters' records); empty reads none.
	StatusBranch string
	Log          *slog.Logger

	mu sync.Mutex
	// warned is the revision of each ref last warned about, so that a ref
	// holding other clusters' records is logged once per commit, not at
	// every read.
	warned map[string]string
}

// Records returns a record for every pulled cluster and those found of
// the pushed ones.
func (r *Refs) Records(ctx context.Context, pulled, pushed []string) ([]status.ClusterStatus, error) {
	branches := make([]string, 0, len(pulled)+1)
	for _, name := range pulled {
		branches = append(branches, StatusRef(name))
	}
	if len(pushed) > 0 && r.StatusBranch != "" {
		branches = append(branches, r.StatusBranch)
	}
	if len(branches) == 0 {
		return nil, nil // no listing at all: a fleet without pulled clusters costs nothing
	}
	revs, err := r.Source.FetchBranches(ctx, branches) // one listing for all
	if err != nil {
		return nil, err
	}
	out := make([]status.ClusterStatus, 0, len(pulled)+len(pushed))
	for _, name := range pulled {
		out = append(out, r.pulled(ctx, name, revs[StatusRef(name)]))
	}
	if len(pushed) == 0 || revs[r.StatusBranch] == "" {
		return out, nil
	}
	snap, err := r.central(ctx, revs[r.StatusBranch])
	if err != nil {
		return out, err
	}
	want := map[string]bool{}
	for _, n := range pushed {
		want[n] = true
	}
	for _, c := range snap.Clusters {
		if want[c.Cluster] {
			out = append(out, c)
		}
	}
	return out, nil
}

// pulled reads one agent's ref at rev ("": the ref does not exist).
func (r *Refs) pulled(ctx context.Context, name, rev string) status.ClusterStatus {
	ref := StatusRef(name)
	if rev == "" {
		return Missing(name, "no branch "+ref)
	}
	tree, err := r.Source.Tree(ctx, rev)
	if err != nil {
		return Missing(name, "cannot read "+ref+": "+err.Error())
	}
	rec, ok, ignored, err := Record(tree, name)
	if len(ignored) > 0 && r.firstWarning(ref, rev) {
		r.log().Warn("an agent's status ref holds records of other clusters; ignored", "ref", ref, "revision", rev, "files", strings.Join(ignored, ","))
	}
	switch {
	case err != nil:
		return Missing(name, ref+": "+err.Error())
	case !ok:
		return Missing(name, ref+" has no "+status.ClusterFile(name))
	}
	return rec
}

// firstWarning reports whether ref at rev was not warned about yet, and
// remembers it was.
func (r *Refs) firstWarning(ref, rev string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.warned[ref] == rev {
		return false
	}
	if r.warned == nil {
		r.warned = map[string]string{}
	}
	r.warned[ref] = rev
	return true
}

func (r *Refs) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// Turns returns the handover turn the other side recorded of each cluster
// (handover.go), with the revision it recorded it at: from the agents'
// refs when fromAgents, else from the central daemon's status branch. A
// cluster without a ref, a record or a turn is at turn 0; a ref or record that cannot be read is an error, never a
// 0 (a side that cannot read the other's turn does not act).
func (r *Refs) Turns(ctx context.Context, fromAgents bool, clusters []string) (map[string]status.Handover, error) {
	out := make(map[string]status.Handover, len(clusters))
	if len(clusters) == 0 {
		return out, nil
	}
	if fromAgents {
		return out, r.agentTurns(ctx, clusters, out)
	}
	if r.StatusBranch == "" {
		return out, nil
	}
	revs, err := r.Source.FetchBranches(ctx, []string{r.StatusBranch})
	if err != nil || revs[r.StatusBranch] == "" {
		return out, err
	}
	snap, err := r.central(ctx, revs[r.StatusBranch])
	if err != nil {
		return out, err
	}
	for _, c := range snap.Clusters {
		if c.Handover != nil {
			out[c.Cluster] = *c.Handover
		}
	}
	return out, nil
}

func (r *Refs) agentTurns(ctx context.Context, clusters []string, out map[string]status.Handover) error {
	branches := make([]string, 0, len(clusters))
	for _, name := range clusters {
		branches = append(branches, StatusRef(name))
	}
	revs, err := r.Source.FetchBranches(ctx, branches)
	if err != nil {
		return err
	}
	for _, name := range clusters {
		rev := revs[StatusRef(name)]
		if rev == "" {
			continue
		}
		tree, err := r.Source.Tree(ctx, rev)
		if err != nil {
			return fmt.Errorf("%s: %w", StatusRef(name), err)
		}
		rec, ok, _, err := Record(tree, name)
		if err != nil {
			return fmt.Errorf("%s: %w", StatusRef(name), err)
		}
		if ok && rec.Handover != nil {
			out[name] = *rec.Handover
		}
	}
	return nil
}

// central reads the central daemon's status branch at rev.
func (r *Refs) central(ctx context.Context, rev string) (status.Snapshot, error) {
	tree, err := r.Source.Tree(ctx, rev)
	if err != nil {
		return status.Snapshot{}, fmt.Errorf("status branch %s: %w", r.StatusBranch, err)
	}
	snap, err := status.Read(tree)
	if err != nil {
		return status.Snapshot{}, fmt.Errorf("status branch %s: %w", r.StatusBranch, err)
	}
	return snap, nil
}
