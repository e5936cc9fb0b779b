// Package helm renders Helm charts the way `helm template` does, offline:
// cluster facts (Kubernetes version, served API versions) come in the
// request, never from a cluster.
//
// Charts come from an HTTP(S) chart repository (index.yaml), an oci://
// registry or a chart folder in the fleet repository tree (an fs.FS).
// Indexes are cached in memory for a short TTL and on disk; archives are
// cached on disk by their sha256 digest and verified against the index.
//
// A render returns ordered steps: pre-install/pre-upgrade hooks by weight,
// the release's objects (CRDs first, then Helm's install order), then
// post-install/post-upgrade hooks by weight. Test hooks and other hook
// events (delete, rollback) are dropped.
//
// Chart templates are repository code that Helm's engine cannot stop
// while it runs. With Options.Worker they run in worker processes (see
// WorkerOptions and ServeWorker) that are killed at a deadline, a memory
// bound or an output bound, so that only the offending chart fails: a
// render/sandbox pool, of which a chart render is one kind of call.
//
// A Renderer is safe for concurrent use: every render loads its own copy of
// the chart; only read-only indexes and files on disk are shared.
package helm
