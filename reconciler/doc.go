// Package reconciler keeps every cluster of the fleet in the state the
// repository describes. The Daemon follows the branch and feeds a work
// queue keyed by cluster; each cluster's reconciliation classifies it,
// matches profiles, renders, applies in dependsOn order and withdraws, on
// its own, without waiting for health (that is observed off the workers)
// or for any other cluster. The package owns the order of things and the
// safety rules between them; the work itself is done by spec, render,
// apply, classify and status.
//
// # The pipeline in files
//
// The files are named for the step of the pipeline they serve: revision
// intake (intake*.go), matching and plan (match.go, plan/), the
// per-cluster queue (queue*.go), one cluster's pass and its applies
// (pass*.go, apply_*.go), status (status_*.go); a rollout's life is in
// rollout_*.go. Listed from the bottom up, a file uses names only of the
// files listed before it (go run ./hack/filegraph ./reconciler counts the
// references running back up: none).
//
//	revision.go            a loaded revision and its Git tree hashes
//	pull.go                pull mode's types: an agent's cluster, the records
//	                         of clusters other processes reconcile (Peers),
//	                         the writer handshake's state (handover)
//	authority.go           who may reconcile a cluster and write its record
//	                         now: one authority, the conjunction of rights
//	                         (mode, shard, handshake turn); the loop's grant
//	luaadapt.go            lua adapted for classify and health checks
//	rollout_tracker.go     a rollout's life: the rollouts of profiles (observe,
//	rollout_report.go        admit, decide, report) and their continuation
//	rollout_resume.go        after a restart; they use only revision.go
//	status_store.go        the latest records of clusters, fleet and rollouts
//	queue.go               the per-cluster work queue (dedup, drift, backoff)
//	queue_lanes.go           its order: urgent clusters before fleet-wide adds
//	match.go               matched profiles, withdrawal order (pure)
//	status_fleet.go        the fleet record's parts of a revision (pure)
//	apply_result.go        apply results as pair records (pure)
//	reconciler.go          Reconciler: options and what carries over passes
//	intake_accept.go       revision intake: the revision in force, accepted
//	status_record.go       a pass's records and metrics
//	pass.go, pass_*.go     one cluster's pass: its state, access, identity,
//	                         facts for classification, alerts' health checks
//	                         (after the applies), records by known labels
//	rollout_pair.go        a rollout's side of a pass: what a pair renders from
//	apply_*.go             applying a profile on the cluster: events, scope,
//	                         tenants, the profile itself (apply_profiles.go)
//	pass_run.go            the pass: connect, classify, match, apply, withdraw,
//	                         health checks
//	daemon.go              Daemon, its options, Speaker
//	daemon_pull.go         pull mode in the Daemon: an agent's refusal and
//	                         status files, the other processes' records
//	                         (peers)
//	daemon_turns.go        the writer handshake's turns across restarts
//	ownership.go           sharded replicas: clusters lost to another
//	intake_unchanged.go    a commit that changes nothing for a cluster
//	status_shard.go        status files of a sharded fleet
//	status_daemon.go       the settled fleet's state and the status commit
//	daemon_handover.go     the writer handshake moved on: releases, waits,
//	                         an agent's claim of a cluster new as pulled
//	queue_workers.go       the workers draining the queue, the health poll
//	queue_events.go        cluster events queue their destinations
//	queue_oci.go           OCI artifacts due at their interval: resolved once
//	                         for the fleet, queue their clusters when moved
//	rollout_daemon.go      a rollout's side of the Daemon: older revisions,
//	                         rollouts of removed profiles
//	intake_verify.go       revision intake: the signature check (package
//	                         verify) of a new revision and of the one in force
//	intake.go              revision intake: load, restore from the status branch
//	daemon_run.go          NewDaemon, RunOnce, Run: the pipeline's driver
//	wire.go                Build: a Daemon from its parts
package reconciler
