package commitstatus

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// PublisherOptions configure a Publisher.
type PublisherOptions struct {
	// Compute shapes the statuses (contexts, stages, link).
	Compute Options
	// Log receives what was set and what failed (default: discarded).
	Log *slog.Logger
	// MinBackoff and MaxBackoff space the retries of a failing host
	// (defaults 1s and 5m): doubled after each failure, reset by a success.
	MinBackoff, MaxBackoff time.Duration
	// Timeout bounds one request to the host (default 30s).
	Timeout time.Duration
	// MaxQueue bounds the statuses waiting to be set (default 256): past
	// it the oldest are dropped. Only the newest wanted status of each
	// (commit, context) waits.
	MaxQueue int
}

func (o PublisherOptions) withDefaults() PublisherOptions {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(5*time.Minute, o.MinBackoff)
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxQueue <= 0 {
		o.MaxQueue = 256
	}
	return o
}

// key is where a status goes: one commit, one context.
type key struct{ sha, context string }

type item struct {
	key key
	st  Status
}

// Publisher sets the statuses Compute says on a Host, each once: it
// remembers what it last set per (commit, context) and sets nothing
// unchanged. That memory is the process's: a restarted daemon sets the
// statuses of the current revision once again (the same values; GitHub and
// Gitea add an identical entry, GitLab refuses the same state, which
// counts as set).
type Publisher struct {
	host Host
	opts PublisherOptions

	mu        sync.Mutex
	queue     []item // the newest wanted status per key, oldest key first
	sent      map[key]Status
	sentOrder []key // sent's keys, oldest first, to bound it
	wake      chan struct{}
}

// NewPublisher returns a Publisher to host; Run sends what Observe queues.
func NewPublisher(host Host, o PublisherOptions) *Publisher {
	return &Publisher{host: host, opts: o.withDefaults(), sent: map[key]Status{}, wake: make(chan struct{}, 1)}
}

// Observe computes the statuses of snap's revision and queues those that
// differ from what was last set. It never waits for the host; the daemon
// calls it after each status commit.
func (p *Publisher) Observe(snap status.Snapshot) {
	sha, sts := Compute(snap, p.opts.Compute)
	if sha == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range sts {
		p.want(item{key: key{sha, st.Context}, st: st})
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// want queues it, replacing what waits for its key; a status equal to the
// one last set takes back what waits instead.
func (p *Publisher) want(it item) {
	i := p.queued(it.key)
	if last, ok := p.sent[it.key]; ok && last == it.st {
		if i >= 0 {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
		}
		return
	}
	if i >= 0 {
		p.queue[i] = it
		return
	}
	p.queue = append(p.queue, it)
	if n := len(p.queue) - p.opts.MaxQueue; n > 0 {
		p.opts.Log.Warn("commit status queue full: oldest statuses dropped", "dropped", n)
		p.queue = append(p.queue[:0], p.queue[n:]...)
	}
}

func (p *Publisher) queued(k key) int {
	for i, it := range p.queue {
		if it.key == k {
			return i
		}
	}
	return -1
}

// Run sets the queued statuses until ctx ends, retrying a failing host
// with backoff.
func (p *Publisher) Run(ctx context.Context) {
	backoff := p.opts.MinBackoff
	for {
		it, ok := p.next()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
			}
			continue
		}
		if err := p.set(ctx, it); err != nil {
			p.opts.Log.Warn("commit status not set; retrying", "commit", status.ShortRevision(it.key.sha),
				"context", it.key.context, "state", it.st.State, "retryIn", backoff, "error", err)
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(2*backoff, p.opts.MaxBackoff)
			continue
		}
		backoff = p.opts.MinBackoff
		p.opts.Log.Info("commit status set", "commit", status.ShortRevision(it.key.sha), "context", it.key.context, "state", it.st.State)
		p.done(it)
	}
}

func (p *Publisher) next() (item, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		return item{}, false
	}
	return p.queue[0], true
}

func (p *Publisher) set(ctx context.Context, it item) error {
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	return p.host.SetStatus(ctx, it.key.sha, it.st)
}

// done records it as set and takes it off the queue, unless a newer status
// for its key came meanwhile.
func (p *Publisher) done(it item) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := p.queued(it.key); i >= 0 && p.queue[i] == it {
		p.queue = append(p.queue[:i], p.queue[i+1:]...)
	}
	if _, ok := p.sent[it.key]; !ok {
		p.sentOrder = append(p.sentOrder, it.key)
	}
	p.sent[it.key] = it.st
	if n := len(p.sentOrder) - 4*p.opts.MaxQueue; n > 0 {
		for _, k := range p.sentOrder[:n] {
			delete(p.sent, k)
		}
		p.sentOrder = append(p.sentOrder[:0], p.sentOrder[n:]...)
	}
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Flush waits until no status waits to be set, or ctx ends: a process
// about to exit (regatta run --once) calls it after its last status
// commit.
func (p *Publisher) Flush(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		p.mu.Lock()
		n := len(p.queue)
		p.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("commit statuses: %d not set: %w", n, ctx.Err())
		case <-t.C:
		}
	}
}
