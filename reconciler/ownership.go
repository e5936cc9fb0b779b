package reconciler

import (
	"context"
	"time"
)

// fencePoll is how often a cluster being reconciled re-checks its
// ownership, so that a replica that lost a cluster cancels its requests
// well within the margin the Lease leaves before another may start.
const fencePoll = 100 * time.Millisecond

// owns reports whether this daemon may work on a cluster: its turn, and
// its shard (ownsShard).
func (d *Daemon) owns(cluster string) bool {
	return d.writable(cluster) && d.ownsShard(cluster)
}

// fenced returns a context for one cluster's reconciliation that ends
// when the daemon no longer owns the cluster.
func (d *Daemon) fenced(ctx context.Context, cluster string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if d.opts.Ownership == nil {
		return ctx, cancel
	}
	go func() {
		t := time.NewTicker(fencePoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !d.owns(cluster) {
					d.r.log.Warn("lost the cluster to another replica; stopping", "cluster", cluster)
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}

// OwnershipChanged tells the daemon that what it owns may have changed
// (the shard Member's OnChange). It stops the drift watches of the
// clusters it no longer owns at once, off the daemon's loop (which may be
// busy pushing status), and signals the loop to queue the clusters.
func (d *Daemon) OwnershipChanged() {
	d.dropLost()
	select {
	case d.owner <- struct{}{}:
	default:
	}
}

// Clusters names the clusters of the revision in force.
func (d *Daemon) Clusters() []string {
	rev := d.r.current()
	if rev == nil {
		return nil
	}
	out := make([]string, 0, len(rev.repo.Clusters))
	for _, c := range rev.repo.Clusters {
		out = append(out, c.Metadata.Name)
	}
	return out
}

// dropLost stops the drift watchers of the clusters this daemon does not
// own and forgets that they converged (another replica may change them
// meanwhile).
func (d *Daemon) dropLost() {
	for _, name := range d.Clusters() {
		if d.owns(name) {
			continue
		}
		d.r.opts.Apply.Forget(name)
		d.store.lost(name)
		d.mu.Lock()
		delete(d.converged, name)
		d.mu.Unlock()
	}
}

// identity is the replica named in status records; empty unsharded.
func (d *Daemon) identity() string {
	if d.opts.Agent != nil {
		return "agent:" + d.opts.Agent.Name
	}
	if d.opts.Ownership == nil {
		return ""
	}
	return d.opts.Ownership.Identity()
}
