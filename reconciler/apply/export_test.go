package apply

import "k8s.io/apimachinery/pkg/runtime/schema"

// StopDriftWatches stops a cluster's drift watches and workers, leaving its
// tracked state: tests use it to make changes the watches cannot see, for
// DriftCheck (the --drift-interval safety net) to find.
func (c *Cluster) StopDriftWatches() {
	if w := c.watcher(); w != nil {
		w.Stop()
	}
}

// WatchedKeys returns the keys (namespace/name) in the store of the drift
// watch of a kind, and the watch's label selector.
func (w *DriftWatcher) WatchedKeys(group, kind string) ([]string, string) {
	w.watchMu.Lock()
	sel := scopeSelector(w.scope)
	w.watchMu.Unlock()
	w.mu.Lock()
	infs := w.informers[schema.GroupKind{Group: group, Kind: kind}]
	w.mu.Unlock()
	var keys []string
	for _, inf := range infs {
		keys = append(keys, inf.ListKeys()...)
	}
	return keys, sel
}

// SharedMapper returns the shared REST mapper the client's mapper uses
// now (nil before its first lookup): clients with equal discovery answers
// return the same one.
func (c *Client) SharedMapper() any {
	if s := c.Mapper.(*clusterMapper).state.Load(); s != nil {
		return s.mapper
	}
	return nil
}

// LimiterAccepts takes a token from the client's rate limiter, without
// waiting: false when its bucket is empty.
func (c *Client) LimiterAccepts() bool { return c.limiter.TryAccept() }
