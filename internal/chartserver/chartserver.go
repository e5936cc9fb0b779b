// Package chartserver serves Helm charts to tests: a chart repository
// (index.yaml and packaged archives) and a minimal read-only OCI registry,
// both over net/http/httptest, from chart folders packaged in the test.
package chartserver

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"
)

// Package loads the chart folder dir, sets its version when version is
// not empty, and returns the packaged archive.
func Package(t testing.TB, dir, version string) []byte {
	t.Helper()
	c, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if version != "" {
		c.Metadata.Version = version
	}
	return save(t, c)
}

func save(t testing.TB, c *chart.Chart) []byte {
	t.Helper()
	out := t.TempDir()
	archive, err := chartutil.Save(c, out)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Repo is a Helm chart repository.
type Repo struct {
	*httptest.Server
	mu       sync.Mutex
	entries  map[string][]map[string]any
	archives map[string][]byte
}

// NewRepo starts an empty chart repository, closed when the test ends.
func NewRepo(t testing.TB) *Repo {
	r := &Repo{entries: map[string][]map[string]any{}, archives: map[string][]byte{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

// Add publishes a packaged chart.
func (r *Repo) Add(t testing.TB, archive []byte) {
	t.Helper()
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	file := fmt.Sprintf("%s-%s.tgz", c.Name(), c.Metadata.Version)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.archives[file] = archive
	r.entries[c.Name()] = append(r.entries[c.Name()], map[string]any{
		"apiVersion": "v2", "name": c.Name(), "version": c.Metadata.Version,
		"digest": sha256Hex(archive), "urls": []string{r.URL + "/" + file},
	})
}

func (r *Repo) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := strings.TrimPrefix(req.URL.Path, "/")
	if name == "index.yaml" {
		data, _ := yaml.Marshal(map[string]any{"apiVersion": "v1", "entries": r.entries})
		_, _ = w.Write(data)
		return
	}
	data, ok := r.archives[name]
	if !ok {
		http.NotFound(w, req)
		return
	}
	_, _ = w.Write(data)
}

// OCI is a read-only OCI distribution registry of Helm charts.
type OCI struct {
	*httptest.Server
	// Requests counts the requests the registry answered.
	Requests atomic.Int64
	// Resolutions counts the manifest requests naming a tag (not a digest,
	// nor a cosign signature's tag): how often clients resolved a tag.
	Resolutions atomic.Int64
	mu          sync.Mutex
	tags        map[string]map[string]string // repository -> tag -> manifest digest
	blobs       map[string][]byte
	uploads     map[string][]byte // blob uploads in progress
	next        int
	// Login, when set ("user:password"), is required of every request
	// (HTTP basic authentication).
	Login string
}

var ociPath = regexp.MustCompile(`^/v2/(.+)/(tags/list|manifests/([^/]+)|blobs/([^/]+))$`)

// NewOCI starts an empty registry, closed when the test ends. Its
// reference is Host() (plain HTTP).
func NewOCI(t testing.TB) *OCI {
	o := &OCI{tags: map[string]map[string]string{}, blobs: map[string][]byte{}}
	o.Server = httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.Close)
	return o
}

// Host is the registry's host:port.
func (o *OCI) Host() string { return strings.TrimPrefix(o.URL, "http://") }

// Push stores a packaged chart as Helm pushes it, under repository (a
// path such as charts/name), tagged with its version, and returns the
// manifest's digest.
func (o *OCI) Push(t testing.TB, repository string, archive []byte) string {
	t.Helper()
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	config, _ := json.Marshal(c.Metadata)
	desc := func(mediaType string, data []byte) map[string]any {
		return map[string]any{"mediaType": mediaType, "digest": "sha256:" + sha256Hex(data), "size": len(data)}
	}
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        desc("application/vnd.cncf.helm.config.v1+json", config),
		"layers":        []any{desc("application/vnd.cncf.helm.chart.content.v1.tar+gzip", archive)},
	})
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, b := range [][]byte{config, archive, manifest} {
		o.blobs["sha256:"+sha256Hex(b)] = b
	}
	if o.tags[repository] == nil {
		o.tags[repository] = map[string]string{}
	}
	digest := "sha256:" + sha256Hex(manifest)
	o.tags[repository][strings.ReplaceAll(c.Metadata.Version, "+", "_")] = digest
	return digest
}

// SignCosign stores a cosign simple-signing signature, made with key, of
// the payload naming signed, as cosign lays it out: the manifest tagged
// sha256-<hex>.sig after tagFor, one payload layer whose annotation
// dev.cosignproject.cosign/signature holds the base64 ASN.1 signature.
// tagFor and signed differ only to make a signature of another artifact.
func (o *OCI) SignCosign(t testing.TB, repository, tagFor, signed string, key *ecdsa.PrivateKey) {
	t.Helper()
	payload := []byte(`{"critical":{"identity":{"docker-reference":"` + o.Host() + "/" + repository + `"},"image":{"docker-manifest-digest":"` +
		signed + `"},"type":"cosign container image signature"},"optional":null}`)
	sum := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	config := []byte("{}")
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + sha256Hex(config), "size": len(config)},
		"layers": []any{map[string]any{"mediaType": "application/vnd.dev.cosign.simplesigning.v1+json", "digest": "sha256:" + sha256Hex(payload),
			"size": len(payload), "annotations": map[string]string{"dev.cosignproject.cosign/signature": base64.StdEncoding.EncodeToString(sig)}}},
	})
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, b := range [][]byte{config, payload, manifest} {
		o.blobs["sha256:"+sha256Hex(b)] = b
	}
	if o.tags[repository] == nil {
		o.tags[repository] = map[string]string{}
	}
	o.tags[repository][strings.Replace(tagFor, ":", "-", 1)+".sig"] = "sha256:" + sha256Hex(manifest)
}

// CosignPublicKey is key's public half as cosign.pub holds it (PEM).
func CosignPublicKey(t testing.TB, key *ecdsa.PrivateKey) string {
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// PushArtifact stores a one-layer artifact (a Flux artifact, a plain
// tar.gz pushed by oras) under repository:tag and returns the manifest's
// digest.
func (o *OCI) PushArtifact(t testing.TB, repository, tag, configMediaType, layerMediaType string, layer []byte) string {
	t.Helper()
	config := []byte("{}")
	desc := func(mediaType string, data []byte) map[string]any {
		return map[string]any{"mediaType": mediaType, "digest": "sha256:" + sha256Hex(data), "size": len(data)}
	}
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        desc(configMediaType, config),
		"layers":        []any{desc(layerMediaType, layer)},
	})
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, b := range [][]byte{config, layer, manifest} {
		o.blobs["sha256:"+sha256Hex(b)] = b
	}
	if o.tags[repository] == nil {
		o.tags[repository] = map[string]string{}
	}
	digest := "sha256:" + sha256Hex(manifest)
	o.tags[repository][tag] = digest
	return digest
}

func (o *OCI) serve(w http.ResponseWriter, r *http.Request) {
	o.Requests.Add(1)
	o.mu.Lock()
	defer o.mu.Unlock()
	if user, pass, _ := r.BasicAuth(); o.Login != "" && user+":"+pass != o.Login {
		w.Header().Set("WWW-Authenticate", `Basic realm="chartserver"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if r.URL.Path == "/v2/" || r.URL.Path == "/v2" {
		return
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPatch || r.Method == http.MethodPut {
		o.push(w, r)
		return
	}
	m := ociPath.FindStringSubmatch(r.URL.Path)
	switch {
	case m == nil:
		http.NotFound(w, r)
	case m[2] == "tags/list":
		tags := []string{}
		for tag := range o.tags[m[1]] {
			tags = append(tags, tag)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"name": m[1], "tags": tags})
	case m[3] != "":
		ref := m[3]
		if !strings.HasPrefix(ref, "sha256:") && !strings.HasSuffix(ref, ".sig") {
			o.Resolutions.Add(1)
		}
		if d, ok := o.tags[m[1]][ref]; ok {
			ref = d
		}
		o.blob(w, r, ref, "application/vnd.oci.image.manifest.v1+json")
	default:
		o.blob(w, r, m[4], "application/octet-stream")
	}
}

var (
	uploadPath   = regexp.MustCompile(`^/v2/(.+)/blobs/uploads/([^/]*)$`)
	manifestPath = regexp.MustCompile(`^/v2/(.+)/manifests/([^/]+)$`)
)

// push takes the part of the distribution API clients such as oras push
// with: monolithic or chunked blob uploads and manifest puts by tag or
// digest. It is called with o.mu held.
func (o *OCI) push(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if m := manifestPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodPut {
		digest := "sha256:" + sha256Hex(body)
		o.blobs[digest] = body
		if !strings.HasPrefix(m[2], "sha256:") {
			if o.tags[m[1]] == nil {
				o.tags[m[1]] = map[string]string{}
			}
			o.tags[m[1]][m[2]] = digest
		}
		w.Header().Set("Docker-Content-Digest", digest)
		w.WriteHeader(http.StatusCreated)
		return
	}
	m := uploadPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.NotFound(w, r)
		return
	}
	if o.uploads == nil {
		o.uploads = map[string][]byte{}
	}
	id := m[2]
	if id == "" {
		o.next++
		id = strconv.Itoa(o.next)
	}
	o.uploads[id] = append(o.uploads[id], body...)
	if d := r.URL.Query().Get("digest"); d != "" {
		o.blobs[d] = o.uploads[id]
		delete(o.uploads, id)
		w.Header().Set("Docker-Content-Digest", d)
		w.Header().Set("Location", "/v2/"+m[1]+"/blobs/"+d)
		w.WriteHeader(http.StatusCreated)
		return
	}
	w.Header().Set("Location", "/v2/"+m[1]+"/blobs/uploads/"+id)
	w.Header().Set("Range", fmt.Sprintf("0-%d", max(len(o.uploads[id])-1, 0)))
	w.WriteHeader(http.StatusAccepted)
}

func (o *OCI) blob(w http.ResponseWriter, r *http.Request, digest, mediaType string) {
	data, ok := o.blobs[digest]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Docker-Content-Digest", digest)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(data)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TarGz packs files (name -> content) as a tar.gz artifact layer; a
// content "->target" is a symlink to target.
func TarGz(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		body := files[name]
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}
		if target, ok := strings.CutPrefix(body, "->"); ok {
			h = &tar.Header{Name: name, Mode: 0o777, Linkname: target, Typeflag: tar.TypeSymlink}
			body = ""
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
