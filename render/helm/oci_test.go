package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// ociRegistry is a minimal read-only OCI distribution registry for tests:
// /v2/, tags/list, manifests and blobs, for charts pushed in the test.
type ociRegistry struct {
	*httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	tags     map[string]map[string]string // repository -> tag -> manifest digest
	blobs    map[string][]byte            // digest -> content (manifests too)
}

var ociPath = regexp.MustCompile(`^/v2/(.+)/(tags/list|manifests/([^/]+)|blobs/([^/]+))$`)

func newOCIRegistry(t *testing.T) *ociRegistry {
	t.Helper()
	reg := &ociRegistry{tags: map[string]map[string]string{}, blobs: map[string][]byte{}}
	reg.Server = httptest.NewServer(http.HandlerFunc(reg.serve))
	t.Cleanup(reg.Close)
	return reg
}

func (reg *ociRegistry) serve(w http.ResponseWriter, r *http.Request) {
	reg.requests.Add(1)
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if r.URL.Path == "/v2/" || r.URL.Path == "/v2" {
		w.WriteHeader(http.StatusOK)
		return
	}
	m := ociPath.FindStringSubmatch(r.URL.Path)
	switch {
	case m == nil:
		http.NotFound(w, r)
	case m[2] == "tags/list":
		var tags []string
		for tag := range reg.tags[m[1]] {
			tags = append(tags, tag)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"name": m[1], "tags": tags})
	case m[3] != "":
		ref := m[3]
		if d, ok := reg.tags[m[1]][ref]; ok {
			ref = d
		}
		reg.blob(w, r, ref, "application/vnd.oci.image.manifest.v1+json")
	default:
		reg.blob(w, r, m[4], "application/octet-stream")
	}
}

func (reg *ociRegistry) blob(w http.ResponseWriter, r *http.Request, digest, mediaType string) {
	data, ok := reg.blobs[digest]
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

// push stores a packaged chart as Helm does: config = Chart.yaml as JSON,
// one chart layer; tagged with the chart version.
func (reg *ociRegistry) push(t *testing.T, repository string, tgz []byte) string {
	t.Helper()
	c, err := loader.LoadArchive(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	config, _ := json.Marshal(c.Metadata)
	desc := func(mediaType string, data []byte) map[string]any {
		return map[string]any{"mediaType": mediaType, "digest": sha256Digest(data), "size": len(data)}
	}
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": desc("application/vnd.cncf.helm.config.v1+json", config),
		"layers": []any{desc("application/vnd.cncf.helm.chart.content.v1.tar+gzip", tgz)},
	})
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for _, b := range [][]byte{config, tgz, manifest} {
		reg.blobs[sha256Digest(b)] = b
	}
	if reg.tags[repository] == nil {
		reg.tags[repository] = map[string]string{}
	}
	reg.tags[repository][strings.ReplaceAll(c.Metadata.Version, "+", "_")] = sha256Digest(manifest)
	return sha256Digest(manifest)
}

func TestOCIRegistry(t *testing.T) {
	reg := newOCIRegistry(t)
	var want string
	for _, v := range []string{"1.1.0", "1.2.0", "1.3.0-rc.1"} {
		tgz, err := os.ReadFile(filepath.Join("testdata", "repo", "fleet-app-"+v+".tgz"))
		if err != nil {
			t.Fatal(err)
		}
		if d := reg.push(t, "charts/fleet-app", tgz); v == "1.2.0" {
			want = d
		}
	}
	dir := t.TempDir()
	opts := Options{CacheDir: dir, PlainHTTP: true, RegistryConfig: filepath.Join(dir, "none.json")}
	req := appRequest("oci://" + strings.TrimPrefix(reg.URL, "http://") + "/charts")
	req.ChartVersion = "~1.2"
	ctx := context.Background()
	r := New(opts)
	res, err := r.Render(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.ChartVersion != "1.2.0" || res.ChartDigest != want {
		t.Errorf("version %s digest %s, want 1.2.0 %s", res.ChartVersion, res.ChartDigest, want)
	}
	golden(t, "fleet-app.yaml", dumpSteps(t, res.Steps))

	before := reg.requests.Load()
	if _, err := r.Render(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := reg.requests.Load() - before; n != 0 {
		t.Errorf("second render made %d registry requests, want 0", n)
	}
	// A new process re-lists tags and resolves the tag, but pulls nothing.
	before = reg.requests.Load()
	if _, err := New(opts).Render(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := reg.requests.Load() - before; n > 3 {
		t.Errorf("a render from the disk cache made %d registry requests, want at most 3 (ping, tags, manifest HEAD)", n)
	}
	req.ChartVersion = "^2"
	if _, err := r.Render(ctx, req); err == nil || !strings.Contains(err.Error(), `no version matches "^2" in oci://`) {
		t.Errorf("got %v", err)
	}
}
