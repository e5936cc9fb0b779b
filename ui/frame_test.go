package ui

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// A daemon's status and the same status read back from the files the
// status branch holds compare equal (so the branch's frame takes over
// from Live), though the files cut long texts and carry generations.
func TestFingerprintSurvivesTheStatusFiles(t *testing.T) {
	live := testFleet(rev1)
	since := time.Now()
	live.Clusters[0].Profiles[0].Message = strings.Repeat("m", 2*status.MaxText)
	live.Clusters[0].Profiles[1].Rollout = &status.PairRollout{Revision: rev1, Stage: "canary", State: "Done", Since: &since}
	files, err := status.Files(live)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for name, b := range files {
		fsys[name] = &fstest.MapFile{Data: b}
	}
	branch, err := status.Read(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if fingerprint(live) != fingerprint(branch) {
		t.Error("a status and its status files differ in fingerprint: the UI would show it as live for ever")
	}
	branch.Clusters[1].Profiles[0].State = status.StateFailed
	if fingerprint(live) == fingerprint(branch) {
		t.Error("a changed pair state left the fingerprint alike")
	}
}
