// Package uibench measures the web UI's fleet page at scale in a real
// browser (BenchmarkFleetPageBrowser): a synthetic status snapshot of
// 2,000 clusters served by the ui package's server, no daemon. It holds
// only tests; benchmarks run on demand (go test -bench), never in `make
// test`.
package uibench
