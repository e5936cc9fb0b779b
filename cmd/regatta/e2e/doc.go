// Package e2e holds end-to-end tests that run regatta as separate
// processes (the test binary re-executed as `regatta`) against real API
// servers.
package e2e
