package agent

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/reconciler/status"
)

func record(cluster string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("apiVersion: regatta.dev/v1alpha1\nkind: ClusterStatus\ncluster: " + cluster + "\nsourceRevision: abc\nreachable: true\n")}
}

// An agent's ref speaks for its own cluster only: records of other
// clusters in it are ignored and reported, a record naming another
// cluster than its file is refused, and an oversized one is not read.
func TestRecordTakesOnlyTheRefsCluster(t *testing.T) {
	tree := fstest.MapFS{
		"status/clusters/edge-1.yaml": record("edge-1"),
		"status/clusters/prod-1.yaml": record("prod-1"), // a compromised edge-1 speaking for prod-1
	}
	rec, ok, ignored, err := Record(tree, "edge-1")
	if err != nil || !ok || rec.Cluster != "edge-1" || rec.Mode != "pull" || !rec.Reachable {
		t.Fatalf("Record = %+v, %v, %v", rec, ok, err)
	}
	if len(ignored) != 1 || ignored[0] != "status/clusters/prod-1.yaml" {
		t.Errorf("ignored = %v, want prod-1's record", ignored)
	}

	tree = fstest.MapFS{"status/clusters/edge-1.yaml": record("prod-1")}
	if _, ok, _, err := Record(tree, "edge-1"); ok || err == nil || !strings.Contains(err.Error(), `names cluster "prod-1", not "edge-1"`) {
		t.Errorf("a record naming another cluster: ok %v, err %v", ok, err)
	}

	tree = fstest.MapFS{"status/clusters/edge-1.yaml": {Data: make([]byte, MaxRecord+1)}}
	if _, ok, _, err := Record(tree, "edge-1"); ok || err == nil {
		t.Errorf("an oversized record: ok %v, err %v", ok, err)
	}

	if _, ok, _, err := Record(fstest.MapFS{}, "edge-1"); ok || err != nil {
		t.Errorf("no record: ok %v, err %v", ok, err)
	}
}

func TestMissingSaysWhatToCheck(t *testing.T) {
	rec := Missing("edge-1", "no branch regatta-status/edge-1")
	if rec.Reachable || rec.Mode != "pull" || !strings.Contains(rec.Error, "regatta run --cluster edge-1") || !strings.Contains(rec.Error, StatusRef("edge-1")) {
		t.Errorf("Missing = %+v", rec)
	}
	if got := status.ClusterFile("edge-1"); got != "status/clusters/edge-1.yaml" {
		t.Errorf("ClusterFile = %s", got)
	}
}

// A fleet without pulled clusters reads nothing from Git (the central
// daemon asks at every status interval): Records does not touch Source.
func TestRecordsWithoutPulledClustersReadsNothing(t *testing.T) {
	r := &Refs{StatusBranch: "regatta/status"} // no Source: any read would panic
	recs, err := r.Records(t.Context(), nil, nil)
	if err != nil || len(recs) != 0 {
		t.Errorf("Records = %v, %v", recs, err)
	}
}
