package rollout

import (
	"testing"
	"time"

	"github.com/regatta-dev/regatta/spec"
)

func TestInWindow(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	office := spec.RolloutWindow{Days: []string{"Mon", "Tue", "Wed", "Thu"}, Hours: "09:00-17:00", TimeZone: "Europe/Paris"}
	night := spec.RolloutWindow{Days: []string{"Sat"}, Hours: "22:00-02:00"}
	tests := []struct {
		name string
		w    spec.RolloutWindow
		now  string
		in   bool
	}{
		{"office hours in Paris", office, "2026-12-01T09:30:00Z", true}, // Tue 10:30 CET
		{"before the office opens in Paris", office, "2026-12-01T07:30:00Z", false},
		{"end excluded", office, "2026-12-01T16:00:00Z", false}, // 17:00 CET
		{"friday is not listed", office, "2026-12-04T10:00:00Z", false},
		{"saturday night", night, "2026-12-05T23:00:00Z", true},
		{"past midnight belongs to saturday", night, "2026-12-06T01:59:00Z", true},
		{"sunday night is not saturday's", night, "2026-12-06T23:00:00Z", false},
		{"after the night window", night, "2026-12-06T02:00:00Z", false},
		{"no days no hours: always", spec.RolloutWindow{}, "2026-12-06T02:00:00Z", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := inWindow(tt.w, at(tt.now)); got != tt.in {
				t.Errorf("inWindow = %v, want %v", got, tt.in)
			}
		})
	}
}

// TestOutsideWindow: a stage that has not started waits for the next
// window and says when to look again; a started one goes on.
func TestOutsideWindow(t *testing.T) {
	ro := threeStages()
	ro.Windows = []spec.RolloutWindow{{Hours: "12:00-13:00"}}
	d := Decide(Input{Rollout: ro, Revision: rev, Clusters: fleet(), Now: t0})
	if len(d.Admit) != 0 || progressOf(d, "canary") != StageOutsideWindow {
		t.Fatalf("admit %v progress %q, want none outside the window", d.Admit, progressOf(d, "canary"))
	}
	if want := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC); !d.Recheck.Equal(want) {
		t.Errorf("recheck %v, want %v", d.Recheck, want)
	}
	d = Decide(Input{Rollout: ro, Revision: rev, Clusters: fleet("canary-1=Done@-5s", "staging-1=Done@-1s"), Now: t0})
	if len(d.Admit) != 1 || d.Admit[0] != "staging-2" {
		t.Errorf("admit %v, want staging-2: a started stage finishes outside its window", d.Admit)
	}
	d = Decide(Input{Rollout: ro, Revision: rev, Clusters: fleet(), Now: t0.Add(2*time.Hour + 5*time.Minute)})
	if len(d.Admit) != 1 {
		t.Errorf("admit %v, want the canary inside the window", d.Admit)
	}
}
