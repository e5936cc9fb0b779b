package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func get(t *testing.T, m *Metrics, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

func TestEndpoints(t *testing.T) {
	m := New()
	if code, _ := get(t, m, "/readyz"); code != 503 {
		t.Errorf("/readyz before the first pass = %d", code)
	}
	m.SetReady(true)
	if code, _ := get(t, m, "/readyz"); code != 200 {
		t.Errorf("/readyz = %d", code)
	}
	if code, _ := get(t, m, "/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	m.SetPairState("c1", "apps", "Applied", []string{"Applied", "Failed"})
	m.SetRevision("abc")
	m.SetRevision("def")
	m.RenderCache.WithLabelValues("hit").Add(3)
	_, body := get(t, m, "/metrics")
	for _, want := range []string{
		`regatta_pair_state{cluster="c1",profile="apps",state="Applied"} 1`,
		`regatta_pair_state{cluster="c1",profile="apps",state="Failed"} 0`,
		`regatta_source_revision{revision="def"} 1`,
		`regatta_render_cache_total{result="hit"} 3`,
		`regatta_pass_duration_seconds_bucket`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, `revision="abc"`) {
		t.Error("old revision still exported")
	}
	m.ForgetPair("c1", "apps")
	if _, body := get(t, m, "/metrics"); strings.Contains(body, `profile="apps"`) {
		t.Error("forgotten pair still exported")
	}
}

// TestPairStateSeries: every state of every pair is exported, the current
// one at 1, as a gauge; a new state moves the 1; forgetting one pair keeps
// the other's series.
func TestPairStateSeries(t *testing.T) {
	m := New()
	all := []string{"Applied", "Failed", "Progressing"}
	m.SetPairState("c1", "apps", "Progressing", all)
	m.SetPairState("c2", "apps", "Applied", all)
	m.SetPairState("c1", "apps", "Failed", all)
	want := `# HELP regatta_pair_state 1 for the current state of each (cluster, profile) pair.
# TYPE regatta_pair_state gauge
regatta_pair_state{cluster="c1",profile="apps",state="Applied"} 0
regatta_pair_state{cluster="c1",profile="apps",state="Failed"} 1
regatta_pair_state{cluster="c1",profile="apps",state="Progressing"} 0
regatta_pair_state{cluster="c2",profile="apps",state="Applied"} 1
regatta_pair_state{cluster="c2",profile="apps",state="Failed"} 0
regatta_pair_state{cluster="c2",profile="apps",state="Progressing"} 0
`
	if err := testutil.CollectAndCompare(m.pairStates, strings.NewReader(want), "regatta_pair_state"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(m.pairStates); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
	m.ForgetPair("c1", "apps")
	if n := testutil.CollectAndCount(m.pairStates); n != len(all) {
		t.Errorf("after forgetting c1: %d series, want %d", n, len(all))
	}
}
