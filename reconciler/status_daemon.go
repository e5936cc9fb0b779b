package reconciler

import (
	"context"
	"fmt"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
)

// commitStatus writes the status files as one commit, when records
// changed since the last one. It is never cut short by a cancelled
// context.
func (d *Daemon) commitStatus() error {
	if d.opts.StatusBranch == "" {
		return nil
	}
	d.commitMu.Lock()
	defer d.commitMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	snap, version := d.store.snapshot()
	if snap.Fleet.SourceRevision == "" || (version == d.committed && !d.peersWrote(ctx)) {
		return nil
	}
	d.stampTurns(&snap)
	w, err := d.statusFiles(ctx, snap)
	if err != nil {
		return err
	}
	rev := snap.Fleet.SourceRevision
	out, err := d.opts.Source.CommitAndPush(ctx, repo.CommitRequest{
		Branch:   d.opts.StatusBranch,
		Prefix:   status.Dir,
		Files:    w.files,
		Delete:   w.del,
		Prune:    w.prune,
		Author:   d.opts.StatusAuthor,
		Message:  "regatta: status of " + status.ShortRevision(rev),
		Trailers: []repo.Trailer{{Key: repo.TrailerSourceRevision, Value: rev}},
		Rewrite:  d.writeRecord,
	})
	if err != nil {
		return fmt.Errorf("commit status: %w", err)
	}
	d.committed, d.statusTip = version, d.settledTip(ctx, w, out)
	if out.Committed {
		d.r.opts.Metrics.StatusCommits.Inc()
		d.r.log.Info("status committed", "branch", d.opts.StatusBranch, "commit", status.ShortRevision(out.SHA), "attempts", out.Attempts)
		d.foldStatusHistory(ctx)
	}
	if w.fleet != nil && d.opts.OnStatus != nil {
		d.opts.OnStatus(*w.fleet)
	}
	return nil
}

// peersWrote reports, for the replica that owns the fleet of a sharded
// fleet, whether other replicas committed their records since its last
// status commit: the fleet-wide status it writes (fleet.yaml, the
// dashboard, OnStatus: notifications and commit statuses) must then show
// them, though none of its own records changed. It costs the fleet's
// owner a fetch of the status branch per status interval.
func (d *Daemon) peersWrote(ctx context.Context) bool {
	if d.opts.Ownership == nil || d.opts.Agent != nil || !d.opts.Ownership.OwnsFleet() {
		return false
	}
	tip, found, err := d.opts.Source.FetchBranch(ctx, d.opts.StatusBranch)
	return err == nil && found && tip != d.statusTip
}

// settledTip is the status branch's tip whose every record the fleet-wide
// status just written showed: the commit pushed right on top of the tip
// it read them from, or that tip when nothing was committed; "" when
// another replica's commit came in between (a push that lost a race and
// went on top of it), so that the next status interval writes the
// fleet-wide status again.
func (d *Daemon) settledTip(ctx context.Context, w statusWrite, out repo.CommitResult) string {
	switch {
	case w.fleet == nil || w.base == "":
		return ""
	case !out.Committed:
		if out.SHA == w.base {
			return w.base
		}
		return ""
	}
	c, err := d.opts.Source.CommitObject(ctx, out.SHA)
	if err != nil || len(c.ParentHashes) != 1 || c.ParentHashes[0].String() != w.base {
		return ""
	}
	return out.SHA
}

// foldStatusHistory lets StatusHistory bound the branch just committed to.
func (d *Daemon) foldStatusHistory(ctx context.Context) {
	if d.opts.StatusHistory == nil {
		return
	}
	if _, err := d.opts.StatusHistory.Committed(ctx, d.opts.StatusBranch); err != nil {
		d.r.log.Warn("status history not folded; the next check tries again", "error", err)
	}
}

// settled reports a settled fleet: metrics, readiness, OnPass.
func (d *Daemon) settled(res PassResult) {
	d.r.record(res)
	d.r.opts.Metrics.SetReady(true)
	if d.opts.OnPass != nil {
		d.opts.OnPass(res)
	}
}

// result is the fleet's state now.
func (d *Daemon) result(start time.Time) PassResult {
	snap, _ := d.store.snapshot()
	res := PassResult{Snapshot: snap, Duration: time.Since(start)}
	res.Converged = len(snap.Fleet.Errors) == 0 && snap.Fleet.AppliedRevision != "" &&
		snap.Fleet.AppliedRevision == snap.Fleet.SourceRevision && converged(snap.Clusters)
	return res
}
