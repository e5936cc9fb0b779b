// Package commitstatus tells the fleet repository's Git host how a
// revision is doing on the clusters: a commit status on the revision's
// commit (pending while clusters apply it, success when every selected pair
// converged, failure with the first errors), and optionally one per rollout
// stage.
//
// It has two halves. Compute is pure: from a status.Snapshot it says which
// statuses the revision should carry. A Publisher remembers what it last
// set per (commit, context), sends only what changed, and sends it from a
// background loop that retries a failing host with backoff, so the daemon's
// Observe call never waits for the network. Host is where statuses go:
// GitHub, GitLab, Gitea/Forgejo and Bitbucket Cloud.
//
// It imports reconciler/status for the record types and nothing else of
// regatta's.
package commitstatus
