package helm

import (
	"context"
	"path"
)

// Render locates, loads and renders a chart with its dependencies.
// Errors are *ChartError naming the chart and version.
func (r *Renderer) Render(ctx context.Context, req Request) (*Result, error) {
	src, err := sourceOf(req)
	if err != nil {
		return nil, &ChartError{Chart: displayName(req), Err: err}
	}
	ref, err := r.locate(ctx, src)
	if err != nil {
		return nil, &ChartError{Chart: displayName(req), Version: req.ChartVersion, Err: err}
	}
	c, err := ref.load(ctx)
	if err != nil {
		return nil, &ChartError{Chart: ref.name, Version: ref.version, Err: err}
	}
	if err := r.resolveDependencies(ctx, c, src, 0); err != nil {
		return nil, &ChartError{Chart: ref.name, Version: ref.version, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	steps, err := r.renderChart(ctx, c, req)
	if err != nil {
		return nil, &ChartError{Chart: ref.name, Version: ref.version, Err: err}
	}
	return &Result{Steps: steps, ChartVersion: ref.version, ChartDigest: ref.digest}, nil
}

// Resolve returns the version and digest Render would use, for cache keys.
// For repositories it costs an index or tag lookup (cached for the TTL);
// for a chart folder it reads the folder. Dependencies fetched at render
// time by a range are not part of the digest.
func (r *Renderer) Resolve(ctx context.Context, req Request) (version, digest string, err error) {
	src, err := sourceOf(req)
	if err != nil {
		return "", "", &ChartError{Chart: displayName(req), Err: err}
	}
	ref, err := r.locate(ctx, src)
	if err != nil {
		return "", "", &ChartError{Chart: displayName(req), Version: req.ChartVersion, Err: err}
	}
	return ref.version, ref.digest, nil
}

func displayName(req Request) string {
	if req.ChartName != "" {
		return req.ChartName
	}
	return path.Base(path.Clean("/" + req.ChartPath))
}
