package helm

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// source says where a chart comes from.
type source struct {
	repoURL       string
	fsys          fs.FS
	dir           string
	name, version string
	auth          basicAuth
}

// chartRef is a located chart: what it is and how to load a fresh copy.
type chartRef struct {
	name, version, digest string
	load                  func(ctx context.Context) (*chart.Chart, error)
}

func sourceOf(req Request) (source, error) {
	if req.ChartFS != nil {
		dir := path.Clean(strings.TrimPrefix(req.ChartPath, "/"))
		return source{fsys: req.ChartFS, dir: dir, name: req.ChartName, version: req.ChartVersion}, nil
	}
	if req.RepositoryURL == "" || req.ChartName == "" {
		return source{}, fmt.Errorf("a chart needs RepositoryURL and ChartName, or ChartFS")
	}
	return source{repoURL: req.RepositoryURL, name: req.ChartName, version: req.ChartVersion,
		auth: authFor(req, req.RepositoryURL)}, nil
}

// locate resolves a source to a version and digest without loading the
// chart (for repositories: an index or tag lookup, cached).
func (r *Renderer) locate(ctx context.Context, s source) (chartRef, error) {
	if err := ctx.Err(); err != nil {
		return chartRef{}, err
	}
	switch {
	case s.fsys != nil:
		return locateFS(s)
	case strings.HasPrefix(s.repoURL, "oci://"):
		return r.locateOCI(ctx, s)
	case strings.HasPrefix(s.repoURL, "https://"), strings.HasPrefix(s.repoURL, "http://"):
		return r.locateRepo(ctx, s)
	default:
		return chartRef{}, fmt.Errorf("repository %q: want an http(s):// or oci:// URL", redact(s.repoURL))
	}
}

func (r *Renderer) locateRepo(ctx context.Context, s source) (chartRef, error) {
	idx, err := r.index(ctx, s.repoURL, s.auth)
	if err != nil {
		return chartRef{}, err
	}
	e, err := idx.pick(s.name, s.version, redact(s.repoURL))
	if err != nil {
		return chartRef{}, err
	}
	u, err := archiveURL(s.repoURL, e)
	if err != nil {
		return chartRef{}, err
	}
	ref := chartRef{name: s.name, version: e.Version, digest: normalizeDigest(e.Digest)}
	if ref.digest == "" { // an index without digests: download to know what it is
		data, err := r.repoArchive(ctx, u, "", s.auth)
		if err != nil {
			return chartRef{}, err
		}
		ref.digest = sha256Digest(data)
	}
	ref.load = func(ctx context.Context) (*chart.Chart, error) {
		data, err := r.repoArchive(ctx, u, ref.digest, s.auth)
		if err != nil {
			return nil, err
		}
		return loadArchive(data)
	}
	return ref, nil
}

// repoArchive returns the archive at u, from the cache when its digest is
// known, else downloaded, verified against want and cached.
func (r *Renderer) repoArchive(ctx context.Context, u, want string, auth basicAuth) ([]byte, error) {
	if data, ok := r.cache.readArchive(archiveKindRepo, want); ok {
		return data, nil
	}
	v, err := r.shared(ctx, "archive:"+u, func(ctx context.Context) (any, error) {
		// A flight that ended just before this one started cached it.
		if data, ok := r.cache.readArchive(archiveKindRepo, want); ok {
			return data, nil
		}
		data, err := r.get(ctx, u, auth)
		if err != nil {
			return nil, err
		}
		got := sha256Digest(data)
		if want != "" && got != want {
			return nil, &DigestError{URL: redact(u), Want: want, Got: got}
		}
		_ = r.cache.write(r.cache.archivePath(archiveKindRepo, got), data)
		return data, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

func loadArchive(data []byte) (*chart.Chart, error) {
	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("loading chart archive: %w", err)
	}
	return c, nil
}
