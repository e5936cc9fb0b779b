// Package ui serves regatta's read-only web UI: the fleet, a cluster, a
// profile and its rollout, the revisions timeline with time travel, what
// changed between two status frames (compare), and event add-on
// instances. It is server-rendered HTML (html/template, so
// every text a profile controls is escaped) with one small embedded
// script that follows the page's live stream (Server-Sent Events) and
// swaps the page's main element without a reload.
//
// The UI reads the fleet from a History (the status branch's commits,
// ui/timeline) and, when it runs inside a daemon, from the daemon's newest
// status (Server.Live) and its view of who speaks for each cluster. It
// never changes a cluster: where a person would act, it shows the commit
// to make. Who may see what is decided by ui/access (a Viewer in the
// request's context): a tenant sees the rule of status/tenants/<name>.md
// (status.ForTenant).
package ui
