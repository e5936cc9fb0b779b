package reconciler

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

// patchCounter counts the server-side apply requests (PATCH) sent to
// clusters, dry-runs apart.
type patchCounter struct {
	mu     sync.Mutex
	apply  int
	dryRun int
}

func (pc *patchCounter) wrap(_ string, rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPatch {
			pc.mu.Lock()
			if req.URL.Query().Get("dryRun") != "" {
				pc.dryRun++
			} else {
				pc.apply++
			}
			pc.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// counts returns the applies and dry-runs so far.
func (pc *patchCounter) counts() (int, int) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.apply, pc.dryRun
}

// countedEventFleet is eventFleet whose clusters count their SSA requests.
func countedEventFleet(t *testing.T, files map[string]string, clusters map[string]string) (*harness, *patchCounter) {
	t.Helper()
	f := newFleetRepo(t)
	for name, labels := range clusters {
		for k, v := range clusterFiles(t, name, labels) {
			files[k] = v
		}
	}
	f.Commit("fleet", files)
	pc := &patchCounter{}
	h := newHarnessWith(t, f, func(o *DaemonOptions) {
		o.StatusBranch = ""
		o.Watch.Interval, o.Watch.DisableFSNotify = time.Hour, true
	}, func(o *apply.Options) { o.Client.WrapTransport = pc.wrap })
	t.Cleanup(h.d.Close)
	runDaemon(t, h)
	return h, pc
}
