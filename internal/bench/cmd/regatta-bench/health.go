package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/internal/bench"
)

// healthFlags are the health phase's flags.
type healthFlags struct {
	clusters       int
	fluxController string
	fluxCRDs       string
	fluxConcurrent int
}

func (h *healthFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&h.clusters, "health-clusters", 6, "clusters with controllers and kwok nodes of the health phase (each ~290 MiB and some CPU more than a bare one)")
	fs.StringVar(&h.fluxController, "flux-kustomize-controller", "", "Flux's kustomize-controller binary, built from its own repository (health phase; empty: Flux is not measured)")
	fs.StringVar(&h.fluxCRDs, "flux-crds", "", "folders of the CRD YAML the Flux method installs, comma-separated (default: <controller's folder>/config/crd/bases and <controller's folder>/../flux-sc/config/crd/bases, for source-controller's GitRepository)")
	fs.IntVar(&h.fluxConcurrent, "flux-concurrent", 0, "kustomize-controller's --concurrent (0: every Kustomization at once, as regatta works on every pair of a wave at once)")
}

// crdDirs are the folders of Flux's CRDs.
func (h *healthFlags) crdDirs() []string {
	if h.fluxCRDs != "" {
		return strings.Split(h.fluxCRDs, ",")
	}
	dir := filepath.Dir(h.fluxController)
	return []string{filepath.Join(dir, "config", "crd", "bases"), filepath.Join(dir, "..", "flux-sc", "config", "crd", "bases")}
}

// runHealth times commit to every Deployment Available on clusters with
// controllers: regatta, the minimal program and, when its binary is given,
// Flux's kustomize-controller.
func runHealth(ctx context.Context, o *options, res *bench.Results, sh *shared) error {
	ho := bench.HealthOptions{Rounds: o.rounds, Clusters: o.health.clusters, Profiles: o.profiles, Bins: sh.bins,
		Timeout: 5 * time.Minute, Dir: abs(filepath.Join(o.raw, "health")), Logf: logf}
	if o.health.fluxController == "" {
		logf("health: no -flux-kustomize-controller: Flux is not measured (build it from github.com/fluxcd/kustomize-controller outside this repository)")
	} else if _, err := os.Stat(o.health.fluxController); err != nil {
		logf("health: Flux is not measured: %v", err)
	} else {
		ho.Flux = bench.FluxOptions{Controller: abs(o.health.fluxController), CRDDirs: o.health.crdDirs(), Concurrent: o.health.fluxConcurrent}
	}
	res.Health = &bench.HealthResult{}
	return bench.RunHealth(ctx, ho, res.Health)
}
