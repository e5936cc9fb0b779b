package notify

import (
	"context"
	"sync"
	"time"
)

// Entry is what the ledger remembers of a message sent: enough to tell
// whether the next is new, and to write the resolution.
type Entry struct {
	Alert     string    `json:"alert"`
	Kind      string    `json:"kind"`
	Profile   string    `json:"profile,omitempty"`
	Revision  string    `json:"revision,omitempty"`
	Stage     string    `json:"stage,omitempty"`
	Count     int       `json:"count"`
	Clusters  []string  `json:"clusters,omitempty"` // the first maxClustersNamed
	Transient bool      `json:"transient,omitempty"`
	Detail    string    `json:"detail,omitempty"` // a transient message's first detail
	At        time.Time `json:"at"`
}

func entryOf(f *firing, now time.Time) Entry {
	e := Entry{Alert: f.alert, Kind: f.subject.Kind, Profile: f.subject.Profile, Revision: f.subject.Revision,
		Stage: f.stage, Count: len(f.clusters), Transient: transient(f.subject.Kind), At: now}
	e.Clusters = f.clusters[:min(len(f.clusters), maxClustersNamed)]
	if e.Transient {
		e.Detail = firstOf(f.details)
	}
	return e
}

// firing is the subject an entry told of, for its resolution.
func (e Entry) firing() *firing {
	f := &firing{alert: e.Alert, subject: subject{Kind: e.Kind, Profile: e.Profile, Revision: e.Revision}, stage: e.Stage}
	f.clusters = append(f.clusters, e.Clusters...)
	for len(f.clusters) < e.Count { // the count the resolution names
		f.clusters = append(f.clusters, "")
	}
	return f
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// Ledger keeps what was sent, by subject key, so that nothing is sent
// twice across restarts and replicas.
type Ledger interface {
	// Update reads the entries, lets change alter them, and stores them
	// when it returns true, atomically against other writers (change may
	// run again on a fresh read when another writer came first).
	Update(ctx context.Context, change func(entries map[string]Entry) bool) error
}

// MemoryLedger is a Ledger of one process's life.
type MemoryLedger struct {
	mu      sync.Mutex
	entries map[string]Entry
}

// NewMemoryLedger returns an empty MemoryLedger.
func NewMemoryLedger() *MemoryLedger { return &MemoryLedger{entries: map[string]Entry{}} }

// Update implements Ledger.
func (l *MemoryLedger) Update(_ context.Context, change func(map[string]Entry) bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	work := make(map[string]Entry, len(l.entries))
	for k, v := range l.entries {
		work[k] = v
	}
	if change(work) {
		l.entries = work
	}
	return nil
}
