package helm

import (
	"context"
	"fmt"
	"io"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/registry"
)

// locateOCI picks a tag (the tag list is cached for the TTL) and resolves
// it to a manifest digest (cached likewise); the archive is cached on disk
// by manifest digest.
func (r *Renderer) locateOCI(ctx context.Context, s source) (chartRef, error) {
	ref := strings.TrimSuffix(strings.TrimPrefix(s.repoURL, "oci://"), "/") + "/" + s.name
	tags, err := r.ociTags(ctx, ref, s.auth)
	if err != nil {
		return chartRef{}, err
	}
	version, err := selectVersion(tags, s.version)
	if err != nil {
		return chartRef{}, &VersionError{Source: "oci://" + ref, Constraint: s.version, Available: tags}
	}
	tagged := ref + ":" + strings.ReplaceAll(version, "+", "_")
	digest, err := r.ociDigest(ctx, tagged, s.auth)
	if err != nil {
		return chartRef{}, err
	}
	return chartRef{name: s.name, version: version, digest: digest,
		load: func(ctx context.Context) (*chart.Chart, error) {
			data, err := r.ociArchive(ctx, tagged, digest, s.auth)
			if err != nil {
				return nil, err
			}
			return loadArchive(data)
		}}, nil
}

func (r *Renderer) ociTags(ctx context.Context, ref string, auth basicAuth) ([]string, error) {
	v, err := r.memoized(ctx, "tags:"+ref, func() (any, error) {
		c, err := r.registryClient(auth)
		if err != nil {
			return nil, err
		}
		tags, err := c.Tags(ref)
		if err != nil {
			return nil, fmt.Errorf("oci://%s: listing tags: %w", ref, err)
		}
		return tags, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}

func (r *Renderer) ociDigest(ctx context.Context, tagged string, auth basicAuth) (string, error) {
	v, err := r.memoized(ctx, "digest:"+tagged, func() (any, error) {
		c, err := r.registryClient(auth)
		if err != nil {
			return nil, err
		}
		desc, err := c.Resolve(tagged)
		if err != nil {
			return nil, fmt.Errorf("oci://%s: %w", tagged, err)
		}
		return desc.Digest.String(), nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

func (r *Renderer) ociArchive(ctx context.Context, tagged, digest string, auth basicAuth) ([]byte, error) {
	if data, ok := r.cache.readArchive(archiveKindOCI, digest); ok {
		return data, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := r.shared(ctx, "pull:"+tagged+"@"+digest, func(context.Context) (any, error) {
		c, err := r.registryClient(auth)
		if err != nil {
			return nil, err
		}
		res, err := c.Pull(tagged, registry.PullOptWithChart(true))
		if err != nil {
			return nil, fmt.Errorf("oci://%s: pull: %w", tagged, err)
		}
		if got := res.Manifest.Digest; got != digest {
			return nil, &DigestError{URL: "oci://" + tagged, Want: digest, Got: got}
		}
		_ = r.cache.write(r.cache.archivePath(archiveKindOCI, digest), res.Chart.Data)
		return res.Chart.Data, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// registryClient makes a client per operation: Helm's client keeps
// credential state, so none is shared between goroutines.
func (r *Renderer) registryClient(auth basicAuth) (*registry.Client, error) {
	opts := []registry.ClientOption{registry.ClientOptHTTPClient(r.http), registry.ClientOptWriter(io.Discard)}
	if r.opts.PlainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	if r.opts.RegistryConfig != "" {
		opts = append(opts, registry.ClientOptCredentialsFile(r.opts.RegistryConfig))
	}
	if auth.username != "" {
		opts = append(opts, registry.ClientOptBasicAuth(auth.username, auth.password))
	}
	return registry.NewClient(opts...)
}

// memoized returns a value from memory within the TTL, else computes it
// (one computation per key at a time) and keeps it.
func (r *Renderer) memoized(ctx context.Context, key string, fn func() (any, error)) (any, error) {
	if v, ok := r.memo.get(key, r.now()); ok {
		return v, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := r.shared(ctx, key, func(context.Context) (any, error) {
		v, err := fn()
		if err == nil {
			r.memo.put(key, v, r.now().Add(r.ttl))
		}
		return v, err
	})
	return v, err
}
