package bench

import (
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestCountConns counts only established connections of the process's
// sockets to the API servers' ports.
func TestCountConns(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0101017F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 20 4 30 10 -1
   1: 0101017F:9C41 0100007F:1F90 06 00000000:00000000 00:00000000 00000000     0        0 112 1 0000000000000000 20 4 30 10 -1
   2: 0102017F:9C42 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 999 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:9C43 0100007F:0050 01 00000000:00000000 00:00000000 00000000     0        0 113 1 0000000000000000 20 4 30 10 -1
   4: 0103017F:9C44 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 114 1 0000000000000000 20 4 30 10 -1
`
	n, err := countConns(strings.NewReader(table), map[string]bool{"111": true, "112": true, "113": true, "114": true}, map[int]bool{8080: true})
	if err != nil || n != 2 {
		t.Errorf("countConns = %d, %v; want 2 (line 1 is TIME_WAIT, line 2 another process's, line 3 another port)", n, err)
	}
}

// TestReadDashboard finds the summary, the first cluster row and the
// problems of a status dashboard.
func TestReadDashboard(t *testing.T) {
	dash := "# Fleet status\n\n_x_\n\nSource revision `abc`\n\nPairs: 4 Applied\n\n| cluster | reachable |\n|---|---|\n| a | yes |\n| b | yes |\n\n## Problems\n\n- **a**: x\n"
	var sc StatusCommit
	readDashboard(&sc, dash)
	if sc.SummaryLine != 7 || sc.TableLine != 11 || sc.ProblemsLine != 14 || sc.DashboardLines != 16 || sc.DashboardBytes != len(dash) {
		t.Errorf("readDashboard = %+v, want summary 7, table 11, problems 14, 16 lines", sc)
	}
}

// TestClusterWrite: writes of a logical cluster's ServiceAccount count,
// its dry runs and others' writes do not.
func TestClusterWrite(t *testing.T) {
	ev := func(user, uri string) testenv.AuditEvent {
		var e testenv.AuditEvent
		e.User.Username, e.RequestURI = user, uri
		return e
	}
	sa := "system:serviceaccount:s-l00001:regatta"
	for _, c := range []struct {
		e    testenv.AuditEvent
		want bool
	}{
		{ev(sa, "/api/v1/namespaces/s-l00001/configmaps/fa-marker?fieldManager=regatta&force=true"), true},
		{ev(sa, "/api/v1/namespaces/s-l00001/configmaps/fa-marker?dryRun=All&fieldManager=regatta"), false},
		{ev("admin", "/api/v1/namespaces/s-l00001/configmaps/fa-marker"), false},
	} {
		if got := clusterWrite(c.e); got != c.want {
			t.Errorf("clusterWrite(%s %s) = %v, want %v", c.e.User.Username, c.e.RequestURI, got, c.want)
		}
	}
}
