package apply

// StopDriftWatches stops a cluster's drift watches and workers, leaving its
// tracked state: tests use it to make changes the watches cannot see, for
// DriftCheck (the --drift-interval safety net) to find.
func (c *Cluster) StopDriftWatches() {
	if w := c.watcher(); w != nil {
		w.Stop()
	}
}
