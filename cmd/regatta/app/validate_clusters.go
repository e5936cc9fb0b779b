package app

import (
	"context"
	"io/fs"

	"github.com/regatta-dev/regatta/reconciler/tenancy"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// checkClusterScopes renders, offline, every profile that selects a
// namespace-scoped cluster entry (spec.namespaces) by its declared labels,
// and reports the objects the entry may not receive — cluster-scoped
// kinds, namespaces it does not list — as errors with file and line, as
// the daemon refuses them. Profiles that do not render offline (remote
// charts, event profiles) are left to render, plan and the daemon.
func checkClusterScopes(ctx context.Context, fsys fs.FS, repo *spec.Repository, diags spec.Diagnostics, r *render.Renderer) spec.Diagnostics {
	if !anyNamespaceScoped(repo) {
		return nil
	}
	invalid := invalidFiles(diags)
	var out diagSet
	for _, c := range repo.Clusters {
		if !c.NamespaceScoped() || invalid[c.Source.File] {
			continue
		}
		for _, p := range repo.Profiles {
			if invalid[p.Source.File] || p.IsEventProfile() || !p.Matches(c.Metadata.Name, c.Metadata.Labels) {
				continue
			}
			out.add(checkClusterPair(ctx, r, fsys, p, c)...)
		}
	}
	return out.sorted()
}

func anyNamespaceScoped(repo *spec.Repository) bool {
	for _, c := range repo.Clusters {
		if c.NamespaceScoped() {
			return true
		}
	}
	return false
}

func checkClusterPair(ctx context.Context, r *render.Renderer, fsys fs.FS, p *spec.Profile, c *spec.Cluster) spec.Diagnostics {
	facts := render.FactsOf(c, c.Metadata.Labels, DefaultKubernetesVersion)
	res, err := r.Render(ctx, render.Request{FS: fsys, Profile: p, Cluster: facts})
	if err != nil {
		return nil
	}
	var out spec.Diagnostics
	for _, v := range tenancy.CheckCluster(c, p, res, tenancy.Options{FS: fsys}) {
		out = append(out, spec.Diagnostic{File: v.File, Line: v.Line,
			Message: "cluster " + c.Metadata.Name + ": " + v.Object + ": " + v.Reason})
	}
	return out
}
