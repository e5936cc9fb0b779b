// Package apply makes one cluster hold what one profile renders, and keeps it
// so. It applies a profile's rendered objects to one cluster with server-side
// apply (github.com/fluxcd/pkg/ssa), add-on by add-on, each healthy before the
// next; records what it applied in an inventory stored in that cluster;
// prunes what a new render dropped; withdraws a profile; detects and corrects
// drift; and reports one Result per (profile, cluster) and pass.
//
// The orchestration across profiles (which profiles match which cluster,
// dependsOn waves, status files) belongs to the reconciler above: this package
// knows one profile and one cluster at a time.
//
// # Reaching clusters
//
// A Manager holds one client per cluster, built from kubeconfig bytes and
// cached by cluster name and a hash of the kubeconfig: a changed kubeconfig
// (rotated token) replaces the cached client on the next Manager.Cluster call.
// Clients have bounded QPS and burst and a per-request timeout, so an
// unreachable cluster fails within that timeout with an *UnreachableError.
// Kubeconfigs that would run a program on the daemon's host (exec credential
// plugins, auth-provider entries) or read files from it are refused unless
// ClientOptions.AllowExec is set (--allow-kubeconfig-exec).
//
// # Applying
//
// Every object is applied with field manager "regatta", forcing ownership of
// the fields it sets, and carries the labels regatta.dev/profile,
// regatta.dev/addon and regatta.dev/cluster and the annotation
// regatta.dev/tier. A Request's steps (add-on, Helm hook phase, weight,
// objects) are applied in the order given; within a step, CRDs, Namespaces and
// ClusterRoles go first and are waited for, then class definitions, then the
// rest (ssa's staging). After each step its objects must become healthy
// (kstatus, or a HealthChecker override) within the health timeout before the
// next step starts. With ContinueOnError false the first failing step stops
// the pass; with it true every step is tried and every error reported.
//
// Every object is applied with a single request: an apply that changes
// nothing is no write (the API server keeps the object and its
// resourceVersion, which tells an unchanged object from a configured one).
// Objects that a drift exclusion selects take ssa's ApplyAll instead (a GET
// and a dry-run apply each, and a real apply only when the dry-run differs),
// which keeps the excluded fields. So do existing objects in steps of the
// Helm hook phases pre and post, which re-create an object whose immutable
// fields changed (a hook Job), as Helm's before-hook-creation policy would.
//
// # Inventory, prune, withdraw
//
// What a profile applied to a cluster is stored in that cluster, in the
// ConfigMap regatta-inv-<fleet>.<profile> (regatta-inv-<profile> without a
// fleet identity) of namespace regatta-system (created when missing): object
// references, revision, render hash, sync mode, tier and stop-matching
// behaviour. A restarted daemon therefore knows what it applied. Options.Fleet
// scopes inventories, labels, prune and withdrawal to one fleet (fleet.go);
// ownership is decided by inventories, labels only name the candidate
// (owner.go).
// After a pass in which every step was applied without error, the objects of
// the previous inventory missing from the new render are deleted, in reverse
// apply order (custom resources before CRDs, namespaced objects before
// Namespaces). Nothing is deleted after a failed pass. An object is never
// deleted when its regatta.dev/profile label names another profile (ownership
// moved) or when it carries the annotation regatta.dev/prune: disabled; both
// cases are reported. Objects that failed to delete stay in the inventory.
// Deleting a Namespace or a CRD deletes everything in it, as in Kubernetes.
//
// Withdraw with WithdrawPolicies deletes every inventoried object (same rules)
// and then the inventory; with LeavePolicies it removes the ownership labels
// and tier annotation from every object and deletes the inventory, and
// deletes no object.
//
// # Sync modes
//
// OneTime applies until one pass completes, then never updates or deletes.
// Continuous applies every render and prunes. ContinuousWithDriftDetection
// also watches the applied objects and corrects drift within seconds. DryRun
// reports, per object, what a Continuous pass would do (created, configured
// with a unified diff, unchanged, deleted, skipped) and changes nothing, not
// even the inventory. Secret data and stringData values never appear in a
// diff: a changed value reads "(redacted, changed)".
//
// A pass is skipped entirely (no write request, a single read of the
// inventory) when the inventory records a complete pass of the same render
// hash, this Manager applied that hash and found it healthy, and no drift is
// pending. The revision does not take part: a new commit that renders the same
// objects costs nothing. A profile this Manager has not seen (the daemon
// restarted) whose inventory records a complete, healthy pass of the same
// render hash, sync mode and tier is restored without a request; a
// drift-detected one is tracked again, so its watches compare it once.
//
// With Request.SkipUnchanged (event profiles), a pass that is not skipped
// sends no request for the objects whose desired state the previous healthy
// pass applied as it is; they stay in the inventory (see manager_unchanged.go).
// A drift-detected profile whose watches track it does the same for the
// objects whose health their metadata tells (ConfigMaps, Secrets, RBAC):
// its watches restore what changes on the cluster.
//
// # Health without waiting
//
// With Request.Async (the daemon's mode) Apply never waits for health: a
// step applied but not healthy yet ends the pass as Progressing with
// Result.Waiting naming what it waits for and until when, and nothing after
// it is applied or pruned. The waited-for objects are watched (see
// "Health watches"); Manager.PollHealth, called every HealthPollInterval
// off the caller's workers, names the clusters where one turned healthy or
// degraded or passed its deadline, from the watches' verdicts (reading only
// the objects of kinds that cannot be watched), and remembers its ready
// function: a watch calls it as soon as its step turns healthy or
// degraded, without waiting for the next call. The next Apply of the
// same render resumes at that step without re-applying those before it,
// and, while its deadline has not passed, re-checks that step's health
// instead of applying it again (see manager_recheck.go for when; an edit made
// meanwhile is corrected by drift detection, or by the first pass after the
// deadline). The health timeout is a deadline counted from the step's first
// apply (again when an apply changes its objects); past it the pass is Failed.
//
// # Health watches
//
// Every wait for health (a step's, an Async step's between passes, the CRDs
// and Namespaces staged before the rest of a step) watches its objects
// instead of reading each one every HealthPollInterval (health_watch.go):
// one list and watch per (kind, namespace), narrowed by metadata.name when
// one object is alone there and by the profile's label otherwise, started
// from the list's resourceVersion so that no change is missed. Every event
// is judged as a poll would judge the object (kstatus, or the
// HealthChecker's override; the same verdicts and messages); an object
// older than the generation the apply returned is stale and not judged. A
// watch that closes or expires (410 Gone) is listed and watched again; a
// kind that cannot be listed or watched (Forbidden for a namespace-scoped
// entry, an aggregated API without watch) falls back to a GET per object
// every HealthPollInterval. A blocking wait keeps ssa's timeout, fail-fast
// and messages ("timeout waiting for: [...]", "failed early due to stalled
// resources: [...]") and stops its watches before it returns; an Async
// step's watch ends when the step is resumed, replaced or forgotten. A
// CRD's kind is waited for in discovery after the CRD is Established, as the
// watch sees it Established before discovery serves the kind.
//
// # Tiers and conflicts
//
// Before applying, objects that exist with a regatta.dev/profile label naming
// another profile are looked up. The lower tier wins: a profile with a lower
// tier than the owner's (read from the object's regatta.dev/tier annotation,
// default 100) takes the object over by applying it with its own labels — no
// delete, no re-create. On an equal or higher tier the current owner keeps it,
// the object is left out of this pass and of this profile's inventory, and the
// Result's state is Conflict, naming the object and the owner.
//
// # Drift
//
// For ContinuousWithDriftDetection profiles a DriftWatcher per cluster runs one
// label-filtered watch (regatta.dev/profile) per kind applied and re-applies,
// from the desired state kept in memory, an object that was deleted or whose
// fields regatta set were changed. A cheap local comparison screens watch
// events; ssa's dry-run comparison decides. Drift exclusions (JSON pointers
// per target selector) are left out of both the comparison and the re-apply,
// so that fields another controller owns — replicas under an
// HorizontalPodAutoscaler, an injected caBundle — are not fought over: on an
// existing object, an excluded field is dropped from the apply when another
// manager owns it and otherwise keeps its in-cluster value (ssa's rule), while
// a new object is created with the value rendered. Objects annotated
// regatta.dev/drift-detection: disabled are not corrected. Every correction is
// counted and reported through Options.OnDrift. Cluster.DriftCheck compares
// every tracked object by dry-run, as the --drift-interval safety net.
//
// # Shared informers
//
// A Client's Informers registry holds the cluster's watches, keyed by
// resource, namespace, label and field selector and view: the drift watcher
// and the event watches (package events) acquire their informers there, and
// users of one key share one informer (see informers.go).
package apply
