package notify

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// Options configures a Notifier.
type Options struct {
	// GroupWait is how long a subject fires before its first message, so
	// that the clusters failing together go in one message (default 30s).
	GroupWait time.Duration
	// Ledger keeps what was sent across restarts and replicas (default:
	// in memory only).
	Ledger Ledger
	// Deliver sends one message to one destination; the Dispatcher's
	// Deliver retries it in the background.
	Deliver func(Message, spec.Notification)
	// Link returns the dashboard entry of a message on the Git host.
	Link func(Message) string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Checked, when set, counts each subject due a message: new (sent) or
	// known (the ledger had it).
	Checked func(outcome string)
	Log     *slog.Logger
}

// DefaultGroupWait is Options.GroupWait when unset.
const DefaultGroupWait = 30 * time.Second

// Notifier turns the fleet's status, as each status commit leaves it, into
// fleet-aware messages for the alerts of the revision in force: one
// message per subject whatever the number of clusters, a new message only
// when a subject's clusters double, a resolution when it ends, and nothing
// sent twice across restarts and replicas (the Ledger).
type Notifier struct {
	opts Options
	// snaps holds the newest snapshot not yet read: Observe never waits.
	snaps chan status.Snapshot

	mu     sync.Mutex
	alerts map[string]*spec.Alert
	mem    *memory
	// since is when each subject firing now started to; absent when each
	// subject told as firing was last seen gone.
	since, absent map[string]time.Time
}

// New returns a Notifier; Run drives it.
func New(opts Options) *Notifier {
	if opts.GroupWait <= 0 {
		opts.GroupWait = DefaultGroupWait
	}
	if opts.Ledger == nil {
		opts.Ledger = NewMemoryLedger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Notifier{opts: opts, snaps: make(chan status.Snapshot, 1), alerts: map[string]*spec.Alert{},
		mem: newMemory(), since: map[string]time.Time{}, absent: map[string]time.Time{}}
}

// SetAlerts takes the alerts of the revision in force.
func (n *Notifier) SetAlerts(alerts []*spec.Alert) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.alerts = make(map[string]*spec.Alert, len(alerts))
	for _, a := range alerts {
		n.alerts[a.ID()] = a
	}
}

// Observe hands the notifier the fleet's status; it never blocks (a
// snapshot not yet read is replaced by the newer one).
func (n *Notifier) Observe(snap status.Snapshot) {
	for {
		select {
		case n.snaps <- snap:
			return
		default:
		}
		select {
		case <-n.snaps:
		default:
		}
	}
}

// Run reads the snapshots until ctx ends, and re-evaluates every
// GroupWait/2 so that a subject's first message leaves on time.
func (n *Notifier) Run(ctx context.Context) {
	tick := time.NewTicker(max(n.opts.GroupWait/2, 100*time.Millisecond))
	defer tick.Stop()
	var last *status.Snapshot
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-n.snaps:
			last = &s
		case <-tick.C:
			if last == nil {
				continue
			}
		}
		n.Step(ctx, *last)
	}
}

// Step evaluates one snapshot and sends what it calls for.
func (n *Notifier) Step(ctx context.Context, snap status.Snapshot) {
	n.mu.Lock()
	alerts := make([]*spec.Alert, 0, len(n.alerts))
	for _, a := range n.alerts {
		alerts = append(alerts, a)
	}
	now := n.opts.Now()
	fires := evaluate(alerts, snap, n.mem, now)
	due := n.due(fires, now)
	gone := n.goneFor(fires, now)
	n.mu.Unlock()
	var out []Message
	known := 0
	err := n.opts.Ledger.Update(ctx, func(entries map[string]Entry) bool {
		out = out[:0]
		changed := false
		known = 0
		for key, f := range due {
			if prev, ok := entries[key]; ok && f.subject.Render != "" && prev.Revision != "" {
				f.subject.Revision = prev.Revision // the revision told, across restarts too
			}
			e, send := decide(entries[key], f, now)
			if !send {
				known++
				continue
			}
			entries[key], changed = e, true
			out = append(out, compose(f, false, ""))
		}
		for key, e := range entries {
			switch {
			case e.Transient && now.Sub(e.At) > transientKept:
				delete(entries, key)
				changed = true
			case e.Transient || fires[key] != nil || !gone(key):
			default: // told as firing, and gone for GroupWait: resolved
				delete(entries, key)
				changed = true
				out = append(out, compose(e.firing(), true, ""))
			}
		}
		return changed
	})
	if err != nil {
		n.opts.Log.Warn("cannot read or write the notification ledger; trying again at the next status", "error", err)
		return
	}
	n.count("known", known)
	n.count("new", len(out))
	for _, m := range out {
		n.deliver(m)
	}
}

func (n *Notifier) count(outcome string, k int) {
	for range k {
		if n.opts.Checked != nil {
			n.opts.Checked(outcome)
		}
	}
}

// goneFor returns whether a subject told as firing has not fired for
// GroupWait, so that a moment without it (a restart still reading the
// fleet, a pass in flight) resolves nothing.
func (n *Notifier) goneFor(fires map[string]*firing, now time.Time) func(string) bool {
	for k := range n.absent {
		if fires[k] != nil {
			delete(n.absent, k)
		}
	}
	return func(k string) bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		since, ok := n.absent[k]
		if !ok {
			n.absent[k] = now
			return false
		}
		return now.Sub(since) >= n.opts.GroupWait
	}
}

// transientKept is how long the ledger remembers a transient message.
const transientKept = 24 * time.Hour

// due are the firing subjects that may send now: a transient one at once,
// another once it has fired for GroupWait (the clusters failing together
// go in one message). It tracks when each subject started firing.
func (n *Notifier) due(fires map[string]*firing, now time.Time) map[string]*firing {
	out := map[string]*firing{}
	for k, f := range fires {
		if transient(f.subject.Kind) {
			out[k] = f
			continue
		}
		since, ok := n.since[k]
		if !ok {
			since = now
			n.since[k] = since
		}
		if now.Sub(since) >= n.opts.GroupWait {
			out[k] = f
		}
	}
	for k := range n.since {
		if fires[k] == nil {
			delete(n.since, k)
		}
	}
	return out
}

// decide says whether a firing subject sends, given what the ledger holds
// of it: a transient one unless the same was sent; another when it was
// never sent, or its clusters have doubled since.
func decide(prev Entry, f *firing, now time.Time) (Entry, bool) {
	next := entryOf(f, now)
	switch {
	case prev.At.IsZero():
		return next, true
	case next.Transient:
		return next, prev.Detail != next.Detail
	default:
		return next, next.Count >= 2*max(prev.Count, 1)
	}
}

// transient happenings are news, not states: they send once and resolve
// nothing.
func transient(kind string) bool {
	return kind == spec.AlertOnDriftCorrected || kind == spec.AlertOnEventInstance || kind == spec.AlertOnRolloutDone
}

// deliver hands a message to each destination of its alert.
func (n *Notifier) deliver(m Message) {
	n.mu.Lock()
	a := n.alerts[m.Alert]
	n.mu.Unlock()
	if a == nil || n.opts.Deliver == nil {
		return // the alert left the repository: its news with it
	}
	if n.opts.Link != nil {
		m.Link = n.opts.Link(m)
		m.Text = body(m)
	}
	for _, dst := range a.Spec.Notifications {
		n.opts.Deliver(m, dst)
	}
}
