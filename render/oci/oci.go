// Package oci reads add-on sources from OCI artifacts: Flux's format
// (`flux push artifact`) and plain single-layer tar.gz artifacts (as `oras
// push` makes them). A reference is oci://registry/repository with a tag,
// a semver range over the tags, or a digest; a pulled artifact is kept by
// its digest and read as an fs.FS.
package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// Layer media types an artifact's content may have.
const (
	FluxContentType = "application/vnd.cncf.flux.content.v1.tar+gzip"
	LayerTarGzip    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// DefaultInterval is how long a tag or semver resolution is reused when
// the Selector does not say.
const DefaultInterval = time.Minute

// Selector picks an artifact version: exactly one of Tag, Semver and
// Digest is set.
type Selector struct {
	Tag    string `yaml:"tag,omitempty"`
	Semver string `yaml:"semver,omitempty"`
	Digest string `yaml:"digest,omitempty"`
	// Interval is how long a tag or semver resolution is reused; 0 is
	// DefaultInterval.
	Interval time.Duration `yaml:"-"`
}

// Options configure a Client.
type Options struct {
	// HTTPClient makes the registry requests (render/netpolicy's client
	// applies the URL policy); nil is http.DefaultClient.
	HTTPClient *http.Client
	// PlainHTTP talks to registries over HTTP (local registries only).
	PlainHTTP bool
	// MaxSize bounds an artifact's compressed layer and its extracted
	// files; default 64 MiB.
	MaxSize int64
	// TTL caps how long a tag or semver resolution is reused, whatever
	// the Selector's Interval (tests set it low); 0 is no cap.
	TTL time.Duration
}

// Client resolves and pulls artifacts. It is safe for concurrent use.
type Client struct {
	opts      Options
	mu        sync.Mutex
	resolved  map[string]resolution
	flights   map[string]*flight // resolutions under way, by key
	artifacts map[string]fs.FS   // by digest
}

// resolution is a tag or range resolved to a digest at a time, with what
// it was resolved with (Refresh asks again with the same).
type resolution struct {
	digest string
	at     time.Time
	url    string
	sel    Selector
	cr     Credentials
}

// New returns a Client.
func New(o Options) *Client {
	if o.MaxSize <= 0 {
		o.MaxSize = 64 << 20
	}
	return &Client{opts: o, resolved: map[string]resolution{}, flights: map[string]*flight{}, artifacts: map[string]fs.FS{}}
}

// Credentials log in to a registry; the zero value pulls anonymously.
type Credentials struct {
	Username, Password string
}

// id names the credentials in cache keys (a hash, never the secret).
func (cr Credentials) id() string {
	if cr == (Credentials{}) {
		return ""
	}
	sum := sha256.Sum256([]byte(cr.Username + "\x00" + cr.Password))
	return hex.EncodeToString(sum[:])
}

// DockerConfigCredentials returns the credentials a docker config
// (.dockerconfigjson) holds for url's registry.
func DockerConfigCredentials(config []byte, url string) (Credentials, error) {
	var dc struct {
		Auths map[string]struct {
			Username string `json:"username"`
			Password string `json:"password"`
			Auth     string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(config, &dc); err != nil {
		return Credentials{}, fmt.Errorf("not a docker config: %w", err)
	}
	host, _, _ := strings.Cut(strings.TrimPrefix(url, "oci://"), "/")
	for k, a := range dc.Auths {
		k = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://"), "/")
		if k != host {
			continue
		}
		if a.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(a.Auth)
			if err != nil {
				return Credentials{}, fmt.Errorf("auths[%q].auth is not base64", host)
			}
			user, pass, _ := strings.Cut(string(raw), ":")
			return Credentials{Username: user, Password: pass}, nil
		}
		return Credentials{Username: a.Username, Password: a.Password}, nil
	}
	return Credentials{}, fmt.Errorf("no credentials for %s", host)
}

// repository opens oci://host/repo.
func (c *Client) repository(url string, cr Credentials) (*remote.Repository, error) {
	ref, ok := strings.CutPrefix(url, "oci://")
	if !ok {
		return nil, fmt.Errorf("%s: not an oci:// reference", url)
	}
	repo, err := remote.NewRepository(ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	repo.PlainHTTP = c.opts.PlainHTTP
	hc := c.opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	client := &auth.Client{Client: hc, Cache: auth.NewCache()}
	if cr != (Credentials{}) {
		client.Credential = auth.StaticCredential(repo.Reference.Registry, auth.Credential{Username: cr.Username, Password: cr.Password})
	}
	repo.Client = client
	return repo, nil
}

// Resolve returns the digest sel names in url: the digest itself, the
// tag's manifest, or the highest tag in the semver range. A tag or range
// resolved less than its interval ago is not asked again, and concurrent
// resolutions of one selection share one request: the clusters of a fleet
// rendering the same artifact ask the registry once.
func (c *Client) Resolve(ctx context.Context, url string, sel Selector, cr Credentials) (string, error) {
	if sel.Digest != "" {
		return sel.Digest, nil
	}
	key := resolutionKey(url, sel, cr)
	c.mu.Lock()
	r, ok := c.resolved[key]
	c.mu.Unlock()
	if ok && time.Since(r.at) < c.reuse(sel) {
		return r.digest, nil
	}
	return c.resolveShared(ctx, key, url, sel, cr)
}

// resolutionKey names a selection of url's versions with credentials.
func resolutionKey(url string, sel Selector, cr Credentials) string {
	return artifactPrefix(url, sel.Tag, sel.Semver) + cr.id()
}

// artifactPrefix starts the keys of every credentials' resolution of
// url's tag or range.
func artifactPrefix(url, tag, semver string) string {
	return url + "\x00" + tag + "\x00" + semver + "\x00"
}

// ask asks the registry which digest sel names now.
func (c *Client) ask(ctx context.Context, url string, sel Selector, cr Credentials) (string, error) {
	repo, err := c.repository(url, cr)
	if err != nil {
		return "", err
	}
	tag := sel.Tag
	if sel.Semver != "" {
		if tag, err = highestTag(ctx, repo, url, sel.Semver); err != nil {
			return "", err
		}
	}
	desc, err := repo.Resolve(ctx, tag)
	if err != nil {
		return "", fmt.Errorf("%s:%s: %w", url, tag, err)
	}
	return desc.Digest.String(), nil
}

// reuse is how long sel's resolution is reused: its Interval (or
// DefaultInterval), capped by Options.TTL.
func (c *Client) reuse(sel Selector) time.Duration {
	d := sel.Interval
	if d <= 0 {
		d = DefaultInterval
	}
	if c.opts.TTL > 0 {
		d = min(d, c.opts.TTL)
	}
	return d
}

// highestTag is the highest tag satisfying the range.
func highestTag(ctx context.Context, repo *remote.Repository, url, rng string) (string, error) {
	con, err := semver.NewConstraint(rng)
	if err != nil {
		return "", fmt.Errorf("semver %q: %w", rng, err)
	}
	var best *semver.Version
	tag := ""
	err = repo.Tags(ctx, "", func(tags []string) error {
		for _, t := range tags {
			v, err := semver.NewVersion(t)
			if err != nil || !con.Check(v) {
				continue
			}
			if best == nil || v.GreaterThan(best) {
				best, tag = v, t
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("%s: listing tags: %w", url, err)
	}
	if best == nil {
		return "", fmt.Errorf("%s: no tag matches %q", url, rng)
	}
	return tag, nil
}

// Pull returns the files of the artifact at digest, from memory when it
// was pulled before from the same repository with the same credentials
// (a digest alone does not show one may read a private artifact).
func (c *Client) Pull(ctx context.Context, url, digest string, cr Credentials) (fs.FS, error) {
	key := url + "\x00" + digest + "\x00" + cr.id()
	c.mu.Lock()
	f, ok := c.artifacts[key]
	c.mu.Unlock()
	if ok {
		return f, nil
	}
	repo, err := c.repository(url, cr)
	if err != nil {
		return nil, err
	}
	layer, err := c.layer(ctx, repo, url, digest)
	if err != nil {
		return nil, err
	}
	files, err := extract(layer, c.opts.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", url, digest, err)
	}
	c.mu.Lock()
	c.artifacts[key] = files
	c.mu.Unlock()
	return files, nil
}

// layer fetches the artifact's content layer, verified against its
// digest: the one layer of Flux's or the OCI tar+gzip media type.
func (c *Client) layer(ctx context.Context, repo *remote.Repository, url, digest string) ([]byte, error) {
	desc, rc, err := repo.FetchReference(ctx, digest)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", url, digest, err)
	}
	defer rc.Close()
	data, err := content.ReadAll(rc, desc)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", url, digest, err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s@%s: not an image manifest: %w", url, digest, err)
	}
	var picked []ocispec.Descriptor
	for _, l := range m.Layers {
		if l.MediaType == FluxContentType || l.MediaType == LayerTarGzip || strings.HasSuffix(l.MediaType, "tar+gzip") {
			picked = append(picked, l)
		}
	}
	if len(picked) != 1 {
		return nil, fmt.Errorf("%s@%s: want one tar+gzip layer (%s or %s), found %d", url, digest, FluxContentType, LayerTarGzip, len(picked))
	}
	if picked[0].Size > c.opts.MaxSize {
		return nil, fmt.Errorf("%s@%s: the layer is %d bytes, more than %d", url, digest, picked[0].Size, c.opts.MaxSize)
	}
	lrc, err := repo.Fetch(ctx, picked[0])
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", url, digest, err)
	}
	defer lrc.Close()
	return content.ReadAll(lrc, picked[0])
}

// ErrUnsafePath is an archive entry leaving the artifact's root.
var ErrUnsafePath = errors.New("leaves the artifact")

// extract reads a tar.gz into memory: regular files, folders, and
// symlinks that stay inside the artifact (followed when read, as the
// repository's are); a symlink out of it is an error naming the link.
// Hard links become copies of the file they name; other entries
// (devices, fifos) are skipped. Paths must stay inside.
func extract(layer []byte, max int64) (fs.FS, error) {
	zr, err := gzip.NewReader(bytes.NewReader(layer))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	out := fstest.MapFS{}
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if path.IsAbs(h.Name) || name == ".." || strings.HasPrefix(name, "../") {
			return nil, fmt.Errorf("%s: %w", h.Name, ErrUnsafePath)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			out[name] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		case tar.TypeReg:
			if total += h.Size; total > max {
				return nil, fmt.Errorf("the extracted files pass %d bytes", max)
			}
			data, err := io.ReadAll(io.LimitReader(tr, h.Size))
			if err != nil {
				return nil, err
			}
			out[name] = &fstest.MapFile{Data: data, Mode: 0o644}
		case tar.TypeSymlink:
			if err := linkInside(name, h.Linkname); err != nil {
				return nil, err
			}
			out[name] = &fstest.MapFile{Data: []byte(h.Linkname), Mode: fs.ModeSymlink | 0o777}
		case tar.TypeLink:
			f, ok := out[path.Clean(strings.TrimPrefix(h.Linkname, "./"))]
			if !ok || !f.Mode.IsRegular() {
				return nil, fmt.Errorf("hard link %s names %s, not a file of the artifact before it: %w", name, h.Linkname, ErrUnsafePath)
			}
			out[name] = &fstest.MapFile{Data: f.Data, Mode: 0o644}
		}
	}
}

// linkInside refuses a symlink whose target leaves the artifact: an
// absolute target, or one climbing above the root from the link's folder.
func linkInside(name, target string) error {
	joined := path.Join(path.Dir(name), target)
	if path.IsAbs(target) || joined == ".." || strings.HasPrefix(joined, "../") {
		return fmt.Errorf("symlink %s points to %s, outside the artifact: %w", name, target, ErrUnsafePath)
	}
	return nil
}
