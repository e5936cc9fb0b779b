// Package events watches, per cluster, the resources an EventSource
// selects and tells which of them match (label filters on the server,
// then each resource's Lua evaluate() and the aggregated selection, in the
// classifier sandbox), and turns matching resources into the instances of
// an event profile with deterministic, collision-free names. Watches take
// their informers from the cluster client's shared registry
// (apply.Informers), as drift detection does: event sources with the same
// selector share one informer, and all share the client's connections; a change is reported once per batch window,
// so a burst of resources costs few reconciliations.
package events
