package reconciler

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
		if d.auth.may(name) {
			continue
		}
		d.r.opts.Apply.Forget(name)
		d.store.lost(name)
		d.mu.Lock()
		delete(d.converged, name)
		d.mu.Unlock()
	}
}
