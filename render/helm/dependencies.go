package helm

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
)

// maxDependencyDepth stops dependency cycles.
const maxDependencyDepth = 8

// resolveDependencies adds every dependency declared in Chart.yaml that is
// not already in the chart's charts/ folder: fetched from its repository at
// the Chart.lock version (or the newest matching its range), or read from a
// file:// folder next to a chart folder. Subcharts are resolved in turn.
func (r *Renderer) resolveDependencies(ctx context.Context, c *chart.Chart, from source, depth int) error {
	if depth > maxDependencyDepth {
		return fmt.Errorf("dependencies nested deeper than %d (a cycle?)", maxDependencyDepth)
	}
	present := map[string]bool{}
	for _, sub := range c.Dependencies() {
		present[sub.Name()] = true
	}
	for _, dep := range c.Metadata.Dependencies {
		if dep == nil || present[dep.Name] {
			continue
		}
		sub, subFrom, err := r.fetchDependency(ctx, c, dep, from)
		if err != nil {
			return fmt.Errorf("dependency %s %s: %w", dep.Name, dep.Version, err)
		}
		if err := r.resolveDependencies(ctx, sub, subFrom, depth+1); err != nil {
			return fmt.Errorf("dependency %s: %w", dep.Name, err)
		}
		c.AddDependency(sub)
		present[dep.Name] = true
	}
	return nil
}

func (r *Renderer) fetchDependency(ctx context.Context, c *chart.Chart, dep *chart.Dependency, from source) (*chart.Chart, source, error) {
	s, err := dependencySource(c, dep, from)
	if err != nil {
		return nil, source{}, err
	}
	ref, err := r.locate(ctx, s)
	if err != nil {
		return nil, source{}, err
	}
	sub, err := ref.load(ctx)
	if err != nil {
		return nil, source{}, err
	}
	if sub.Name() != dep.Name {
		return nil, source{}, fmt.Errorf("%s holds chart %q", dep.Repository, sub.Name())
	}
	return sub, s, nil
}

func dependencySource(c *chart.Chart, dep *chart.Dependency, from source) (source, error) {
	repo := dep.Repository
	switch {
	case strings.HasPrefix(repo, "file://"):
		if from.fsys == nil {
			return source{}, fmt.Errorf("%s: file:// dependencies work only for chart folders; vendor it into charts/", repo)
		}
		dir := path.Join(from.dir, strings.TrimPrefix(repo, "file://"))
		if !fs.ValidPath(dir) {
			return source{}, fmt.Errorf("%s: outside the repository", repo)
		}
		return source{fsys: from.fsys, dir: dir, name: dep.Name}, nil
	case strings.HasPrefix(repo, "https://"), strings.HasPrefix(repo, "http://"), strings.HasPrefix(repo, "oci://"):
		auth := from.auth
		if !sameHost(repo, auth.host) {
			auth = basicAuth{}
		}
		return source{repoURL: repo, name: dep.Name, version: lockedVersion(c, dep), auth: auth}, nil
	default:
		return source{}, fmt.Errorf("repository %q: not in charts/ and not a URL (repository aliases are not supported)", repo)
	}
}

// lockedVersion prefers the version pinned in Chart.lock.
func lockedVersion(c *chart.Chart, dep *chart.Dependency) string {
	if c.Lock != nil {
		for _, l := range c.Lock.Dependencies {
			if l != nil && l.Name == dep.Name && l.Repository == dep.Repository {
				return l.Version
			}
		}
	}
	return dep.Version
}
