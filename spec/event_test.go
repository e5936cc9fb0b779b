package spec

import "testing"

// TestEventTriggerClusters: which clusters an event profile selects (its
// pairs, the destinations) and which it watches (the sources).
func TestEventTriggerClusters(t *testing.T) {
	repo, diags := loadDir(t, "testdata/valid-events")
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	shared, app := map[string]string{"role": "shared"}, map[string]string{"role": "app"}
	tests := []struct {
		profile, cluster string
		labels           map[string]string
		selects, watches bool
	}{
		{"netpol", "app", app, true, true},
		{"netpol", "shared", shared, false, false},
		{"export", "app", app, true, false},
		{"export", "shared", shared, false, true},
	}
	for _, tt := range tests {
		p := repo.Profile(tt.profile)
		if got := p.Matches(tt.cluster, tt.labels); got != tt.selects {
			t.Errorf("%s selects %s = %v, want %v", tt.profile, tt.cluster, got, tt.selects)
		}
		if got := p.WatchesCluster(tt.cluster, tt.labels); got != tt.watches {
			t.Errorf("%s watches %s = %v, want %v", tt.profile, tt.cluster, got, tt.watches)
		}
	}
	if c := repo.Profile("netpol").Spec.EventTrigger.Cap(); c != 100 {
		t.Errorf("netpol cap %d, want 100", c)
	}
	if c := repo.Profile("export").Spec.EventTrigger.Cap(); c != DefaultMaxInstances {
		t.Errorf("export cap %d, want the default", c)
	}
}
