// Package bench is regatta's benchmark suite (issue 8): it measures regatta
// against what people script today and against the API servers' own limit,
// on real kube-apiservers, and writes internal/bench/REPORT.md (today's figures;
// the method of each is in internal/bench/METHODS.md).
//
// Nothing here runs in `go test ./...` beyond quick checks of the
// generators: the suite is `make bench`, that is
//
//	go run ./internal/bench/cmd/regatta-bench
//
// Phases (each can be selected with -phases):
//
//   - rollout: per round, 10 fresh kube-apiservers; regatta (an in-process
//     daemon, built by app.NewDaemon from `regatta run`'s flags as the
//     binary builds it, following a loopback Git server), the scripted reference
//     (kubectl apply --server-side, serial and xargs -P 10) and the minimal
//     program (server-side apply of pre-rendered objects) take turns in a
//     rotating order, each in its own namespaces, and so does the floor:
//     the minimal program with the bookkeeping regatta's guarantees need
//     (inventories before and after, ownership labels, drift watches), so
//     that what regatta costs beyond it is its own code. The CPU every
//     process of the machine used is recorded per first rollout, and
//     -apiserver-profile keeps a CPU profile of each API server. After
//     regatta's first rollout, commits that change one Kustomize overlay
//     are timed too.
//   - daemon: `bin/regatta run` as a child process on 10 fresh clusters:
//     API requests per cluster per drift interval from each API server's
//     apiserver_request_total, drift correction latency, and RSS.
//   - scale: 1,000 and 10,000 simulated clusters (facts only) × 20
//     profiles, each size in a child process for an honest peak memory.
//   - gobench: `go test -bench` of the hot functions, for benchstat.
//   - progressive: per round, 9 fresh kube-apiservers and an in-process
//     daemon rolling a change out in three stages (canary 1, staging 2,
//     production 6 with maxUpdate 2, 1 s soaks): commit to the last
//     cluster applied and healthy minus the soaks, each stage's time and
//     the most clusters updating at once (issue 14).
//   - health: per round and method, -health-clusters (default 6) fresh
//     v1.37 clusters with kube-controller-manager, kube-scheduler and kwok
//     nodes (each method's turn on clusters of its own), and
//     profiles that each hold a Deployment of 3 replicas: from the commit
//     to every Deployment on every cluster Available, judged by the
//     bench's own poll, for regatta (an in-process daemon with its
//     built-in health, triggered on the push), the minimal program (apply,
//     then the poll) and Flux's kustomize-controller with wait: true
//     (issue 28). Flux is a tool of the bench only, built from its own
//     repository outside regatta's module and passed as
//     -flux-kustomize-controller (with -flux-crds, its and
//     source-controller's CRD folders); without it Flux is skipped.
//   - soak (not in the default phases; `make soak-short` is its short
//     form): `bin/regatta run` on the fleet phase's logical clusters for
//     -soak-duration under commits, drift, event resources, an API server restarted and one
//     stopped, the Git host down; its memory, goroutines, descriptors,
//     clone, watches and requests are sampled and judged by their slopes
//     after a warm-up, with checks that every commit converged, no status
//     record went missing or back and nothing was applied twice (issue 54;
//     soak*.go, METHODS.md#soak).
package bench
