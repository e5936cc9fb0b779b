package reconciler

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// statusWrite is what a status commit writes (files), deletes (del), and
// whether it prunes the rest of status/; fleet is the whole fleet as the
// commit's dashboard shows it, nil when this daemon does not write the
// fleet-wide status (an agent, a replica that does not own the fleet).
type statusWrite struct {
	files map[string][]byte
	del   []string
	prune bool
	fleet *status.Snapshot
	// base is the status branch's tip the fleet's owner read the other
	// replicas' records from.
	base string
}

// statusFiles returns what a status commit writes. A daemon alone writes
// the whole tree. A replica of a sharded fleet writes only the records of
// the clusters it owns, never prunes, and leaves every other record as it
// finds it on the branch (a push that loses a race is re-applied on top of
// the winner's commit, so no replica drops another's records); the replica
// that owns the fleet also writes fleet.yaml and the dashboard, from the
// branch's records overlaid with its own, and deletes the records of
// clusters that left the repository. A replica's own records are those of
// the clusters it owns and has reconciled since it owned them: a record it
// was seeded with at start, or kept from before it lost the cluster, is
// older than what the cluster's owner since wrote (writeRecord checks
// again at the commit).
func (d *Daemon) statusFiles(ctx context.Context, snap status.Snapshot) (statusWrite, error) {
	if d.opts.Agent != nil {
		files, err := d.agentFiles(snap)
		return statusWrite{files: files, prune: true}, err
	}
	if d.opts.Ownership == nil {
		files, err := status.FilesWith(&d.encoder, snap)
		return statusWrite{files: files, prune: true, fleet: &snap}, err
	}
	own := status.Snapshot{Fleet: snap.Fleet}
	for _, c := range snap.Clusters {
		if d.writesRecord(c.Cluster) {
			own.Clusters = append(own.Clusters, c)
		}
	}
	if !d.opts.Ownership.OwnsFleet() {
		files, err := status.FilesWith(&d.encoder, own)
		return statusWrite{files: clusterFilesOnly(files)}, err
	}
	base, tip, err := d.branchStatusAt(ctx)
	if err != nil {
		return statusWrite{}, err
	}
	merged, del := d.overlay(base, own)
	files, err := status.FilesWith(&d.encoder, merged)
	if err != nil {
		return statusWrite{}, err
	}
	for _, c := range base.Clusters {
		if !d.writesRecord(c.Cluster) {
			delete(files, status.ClusterFile(c.Cluster)) // its owner's to write
		}
	}
	return statusWrite{files: files, del: del, fleet: &merged, base: tip}, nil
}

// writesRecord reports whether a replica writes a cluster's record: one
// it owns and computed, or, for the fleet's owner, a pulled cluster's as
// its agent committed it.
func (d *Daemon) writesRecord(cluster string) bool {
	return d.auth.writes(cluster, d.store.isComputed(cluster))
}

// writeRecord is the status commit's Rewrite: at every attempt, against
// the commit it builds on, a cluster record is written only while this
// daemon owns the cluster (a replica that lost it meanwhile leaves the new
// owner's record alone), only when it changed, and numbered after the
// record it replaces (status.NextRecord).
func (d *Daemon) writeRecord(file string, parent []byte, found bool, proposed []byte) ([]byte, bool) {
	if path.Dir(file) != status.ClustersDir {
		return proposed, true
	}
	if name := strings.TrimSuffix(path.Base(file), ".yaml"); !d.auth.may(name) && !d.auth.shows(name) {
		return nil, false
	}
	return d.records.Next(file, parent, found, proposed)
}

// clusterFilesOnly keeps the cluster records of a status tree.
func clusterFilesOnly(files map[string][]byte) map[string][]byte {
	for p := range files {
		if path.Dir(p) != status.ClustersDir {
			delete(files, p)
		}
	}
	return files
}

// branchStatus reads the records on the status branch now.
func (d *Daemon) branchStatus(ctx context.Context) (status.Snapshot, error) {
	snap, _, err := d.branchStatusAt(ctx)
	return snap, err
}

// branchStatusAt reads the records on the status branch now, and the
// branch's tip they are read from ("" when there is no branch yet).
func (d *Daemon) branchStatusAt(ctx context.Context) (status.Snapshot, string, error) {
	rev, found, err := d.opts.Source.FetchBranch(ctx, d.opts.StatusBranch)
	if err != nil || !found {
		return status.Snapshot{}, "", err
	}
	tree, err := d.opts.Source.Tree(ctx, rev)
	if err != nil {
		return status.Snapshot{}, "", fmt.Errorf("read status branch: %w", err)
	}
	snap, err := status.Read(tree)
	return snap, rev, err
}

// overlay is the fleet as the dashboard shows it: the branch's records of
// the repository's clusters with this replica's own on top. It also
// returns the record files of clusters no longer in the repository.
func (d *Daemon) overlay(base, own status.Snapshot) (status.Snapshot, []string) {
	names := map[string]bool{}
	for _, n := range d.Clusters() {
		names[n] = true
	}
	byName := map[string]status.ClusterStatus{}
	var del []string
	for _, c := range base.Clusters {
		switch {
		case names[c.Cluster] || len(names) == 0: // none: no revision in force yet
			byName[c.Cluster] = c
		case !strings.ContainsAny(c.Cluster, "/\\"):
			del = append(del, status.ClusterFile(c.Cluster))
		}
	}
	for _, c := range own.Clusters {
		byName[c.Cluster] = c
	}
	out := status.Snapshot{Fleet: own.Fleet}
	for _, c := range byName {
		out.Clusters = append(out.Clusters, c)
	}
	return out, del
}
