package helm

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"sigs.k8s.io/yaml"
)

// indexFile is the part of a repository's index.yaml that rendering needs.
// It is read-only once parsed and shared between renders.
type indexFile struct {
	Entries map[string][]indexEntry `json:"entries"`
}

type indexEntry struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	URLs    []string `json:"urls"`
	Digest  string   `json:"digest"`
}

func parseIndex(data []byte) (*indexFile, error) {
	var idx indexFile
	if err := yaml.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("index.yaml: %w", err)
	}
	if idx.Entries == nil {
		return nil, fmt.Errorf("index.yaml: no entries")
	}
	return &idx, nil
}

// index returns the repository's index: from memory within the TTL, else
// from disk within the TTL, else over HTTP (one fetch per URL at a time).
func (r *Renderer) index(ctx context.Context, repoURL string, auth basicAuth) (*indexFile, error) {
	u := indexURL(repoURL)
	now := r.now()
	if v, ok := r.memo.get("index:"+u, now); ok {
		return v.(*indexFile), nil
	}
	v, err := r.shared(ctx, "index:"+u, func(ctx context.Context) (any, error) {
		return r.loadIndex(ctx, u, auth)
	})
	if err != nil {
		return nil, err
	}
	return v.(*indexFile), nil
}

func (r *Renderer) loadIndex(ctx context.Context, u string, auth basicAuth) (*indexFile, error) {
	now := r.now()
	p := r.cache.indexPath(u)
	data, fresh := r.cache.readFresh(p, r.ttl, now)
	if !fresh {
		var err error
		if data, err = r.get(ctx, u, auth); err != nil {
			return nil, err
		}
	}
	idx, err := parseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(u), err)
	}
	if !fresh {
		_ = r.cache.write(p, data) // the cache is an optimisation
	}
	r.memo.put("index:"+u, idx, now.Add(r.ttl))
	return idx, nil
}

// pick finds the entry for name matching version (exact, range or empty).
func (idx *indexFile) pick(name, version, source string) (indexEntry, error) {
	entries := idx.Entries[name]
	versions := make([]string, 0, len(entries))
	for _, e := range entries {
		versions = append(versions, e.Version)
	}
	v, err := selectVersion(versions, version)
	if err != nil {
		return indexEntry{}, &VersionError{Source: source, Constraint: version, Available: versions}
	}
	for _, e := range entries {
		if e.Version == v {
			return e, nil
		}
	}
	return indexEntry{}, fmt.Errorf("internal: version %s vanished", v)
}

func indexURL(repoURL string) string {
	return strings.TrimSuffix(repoURL, "/") + "/index.yaml"
}

// archiveURL resolves an entry's first URL against the repository URL.
func archiveURL(repoURL string, e indexEntry) (string, error) {
	if len(e.URLs) == 0 {
		return "", fmt.Errorf("index entry %s %s has no urls", e.Name, e.Version)
	}
	base, err := url.Parse(strings.TrimSuffix(repoURL, "/") + "/")
	if err != nil {
		return "", err
	}
	ref, err := url.Parse(e.URLs[0])
	if err != nil {
		return "", fmt.Errorf("index entry %s %s: %w", e.Name, e.Version, err)
	}
	return base.ResolveReference(ref).String(), nil
}
