package notify

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/spec"
)

// Secrets reads a notification's Secret (in regatta's namespace of the
// management cluster) at each send, so a rotated credential is used at
// once.
type Secrets interface {
	Secret(ctx context.Context, name string) (map[string][]byte, error)
}

// SecretFiles reads a notification's secretFile, a SOPS-encrypted Secret
// manifest of the repository, at each send from the revision in force.
type SecretFiles interface {
	SecretFile(ctx context.Context, file string) (map[string][]byte, error)
}

// DispatchOptions configures a Dispatcher.
type DispatchOptions struct {
	Secrets Secrets
	Files   SecretFiles
	Env     Env
	// Backoff is the first wait after a failed send, doubled up to
	// MaxBackoff (defaults 2s and 5m).
	Backoff, MaxBackoff time.Duration
	// GiveUpAfter drops a message still not sent after this long (default
	// 6h), with an error in the log.
	GiveUpAfter time.Duration
	// QueueSize bounds the messages waiting for one destination (default
	// 256); past it the oldest is dropped, with an error in the log.
	QueueSize int
	Log       *slog.Logger
	// Count, when set, counts each send by destination type and result:
	// sent, failed (an attempt; it is retried) or dropped.
	Count func(typ, result string)
}

// Dispatcher sends messages in the background, each destination on its
// own: one that is down is retried with backoff and delays neither the
// others nor the caller (Deliver never blocks).
type Dispatcher struct {
	opts DispatchOptions
	ctx  context.Context
	wg   sync.WaitGroup

	mu     sync.Mutex
	queues map[string]*queue
}

// queue is one destination's messages in order.
type queue struct {
	mu      sync.Mutex
	pending []Message
	wake    chan struct{}
}

// NewDispatcher returns a Dispatcher whose senders stop with ctx.
func NewDispatcher(ctx context.Context, opts DispatchOptions) *Dispatcher {
	if opts.Backoff <= 0 {
		opts.Backoff = 2 * time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 5 * time.Minute
	}
	if opts.GiveUpAfter <= 0 {
		opts.GiveUpAfter = 6 * time.Hour
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 256
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Dispatcher{opts: opts, ctx: ctx, queues: map[string]*queue{}}
}

// Deliver queues a message for a destination; it never blocks.
func (d *Dispatcher) Deliver(m Message, n spec.Notification) {
	id := n.Type + "/" + n.Name + "/" + secretName(n) + "/" + n.Channel
	d.mu.Lock()
	q := d.queues[id]
	if q == nil {
		q = &queue{wake: make(chan struct{}, 1)}
		d.queues[id] = q
		d.wg.Add(1)
		go d.sender(q, n)
	}
	d.mu.Unlock()
	q.mu.Lock()
	if len(q.pending) >= d.opts.QueueSize {
		d.opts.Log.Error("notification queue full; dropping the oldest message", "notification", n.Name, "dropped", q.pending[0].Title)
		d.count(n.Type, "dropped")
		q.pending = q.pending[1:]
	}
	q.pending = append(q.pending, m)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Wait blocks until every sender stopped (after ctx ended).
func (d *Dispatcher) Wait() { d.wg.Wait() }

// sender sends one destination's messages in order, retrying each.
func (d *Dispatcher) sender(q *queue, n spec.Notification) {
	defer d.wg.Done()
	for {
		q.mu.Lock()
		var m *Message
		if len(q.pending) > 0 {
			m = &q.pending[0]
		}
		q.mu.Unlock()
		if m == nil {
			select {
			case <-d.ctx.Done():
				return
			case <-q.wake:
				continue
			}
		}
		if !d.sendWithRetry(*m, n) {
			return
		}
		q.mu.Lock()
		q.pending = q.pending[1:]
		q.mu.Unlock()
	}
}

// sendWithRetry sends until it succeeds or gives up; false when ctx
// ended.
func (d *Dispatcher) sendWithRetry(m Message, n spec.Notification) bool {
	start, wait := time.Now(), d.opts.Backoff
	for attempt := 1; ; attempt++ {
		err := d.sendOnce(m, n)
		if err == nil {
			d.count(n.Type, "sent")
			d.opts.Log.Info("notification sent", "notification", n.Name, "type", n.Type, "title", m.Title, "attempts", attempt)
			return true
		}
		d.count(n.Type, "failed")
		if time.Since(start) > d.opts.GiveUpAfter {
			d.count(n.Type, "dropped")
			d.opts.Log.Error("notification not sent; giving up", "notification", n.Name, "type", n.Type, "title", m.Title, "attempts", attempt, "error", err)
			return true
		}
		d.opts.Log.Warn("notification not sent; retrying", "notification", n.Name, "type", n.Type, "in", wait, "error", err)
		select {
		case <-d.ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, d.opts.MaxBackoff)
	}
}

func (d *Dispatcher) count(typ, result string) {
	if d.opts.Count != nil {
		d.opts.Count(typ, result)
	}
}

func (d *Dispatcher) sendOnce(m Message, n spec.Notification) error {
	ctx, cancel := context.WithTimeout(d.ctx, 30*time.Second)
	defer cancel()
	data, err := d.credentials(ctx, n)
	if err != nil {
		return err
	}
	dst, err := Build(n, data, d.opts.Env)
	if err != nil {
		return err
	}
	return dst.Send(ctx, m)
}

// credentials reads a notification's Secret, in the management cluster
// or in the repository (secretFile); nil when it names none.
func (d *Dispatcher) credentials(ctx context.Context, n spec.Notification) (map[string][]byte, error) {
	switch {
	case n.SecretFile != "":
		if d.opts.Files == nil {
			return nil, &ConfigError{Notification: n.Name, Type: n.Type, Reason: "no reader of the repository's secret files (" + n.SecretFile + ")"}
		}
		return d.opts.Files.SecretFile(ctx, n.SecretFile)
	case n.SecretRef != nil && n.SecretRef.Name != "":
		if d.opts.Secrets == nil {
			return nil, &ConfigError{Notification: n.Name, Type: n.Type, Reason: "no management cluster to read Secret " + n.SecretRef.Name + " from"}
		}
		return d.opts.Secrets.Secret(ctx, n.SecretRef.Name)
	}
	return nil, nil
}
