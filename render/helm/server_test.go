package helm

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// repoServer serves testdata/repo like a chart repository and counts
// requests. tamper makes every archive come back with an extra byte.
type repoServer struct {
	*httptest.Server
	requests atomic.Int64
	tamper   atomic.Bool
}

func newRepoServer(t *testing.T) *repoServer { return newRepoServerB(t) }

func newRepoServerB(t testing.TB) *repoServer {
	t.Helper()
	s := &repoServer{}
	files := http.FileServer(http.Dir(filepath.Join("testdata", "repo")))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if s.tamper.Load() && strings.HasSuffix(r.URL.Path, ".tgz") {
			data, err := os.ReadFile(filepath.Join("testdata", "repo", filepath.Base(r.URL.Path)))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write(append(data, 0))
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// newTestRenderer uses a per-test cache folder and renders chart
// templates in workers (this test binary, see TestMain).
func newTestRenderer(t *testing.T) *Renderer {
	t.Helper()
	r := New(Options{CacheDir: t.TempDir(), RegistryConfig: filepath.Join(t.TempDir(), "none.json"), Worker: testWorker(t)})
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func appRequest(repoURL string) Request {
	return Request{
		RepositoryURL:    repoURL,
		ChartName:        "fleet-app",
		ChartVersion:     "1.2.0",
		ReleaseName:      "shop",
		ReleaseNamespace: "apps",
		KubeVersion:      "v1.37.2",
	}
}
