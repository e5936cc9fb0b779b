package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/clusterreader"
	"github.com/fluxcd/cli-utils/pkg/object"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// errAwaiting stops a pass at a step that was applied and is not healthy
// yet (Request.Async): the pass ends Progressing and the next Apply of the
// same render resumes at that step.
var errAwaiting = errors.New("waiting for health")

// errHealthDeadline is the cause of a HealthError whose health timeout
// passed across Apply calls (Request.Async).
var errHealthDeadline = errors.New("health timeout passed")

// awaiting is an Async step that was applied and is not healthy yet: what
// PollHealth checks, and where the next Apply of the same render resumes.
type awaiting struct {
	renderHash string
	// step is the index of the step in Request.Steps; the steps before it
	// were applied at renderHash and became healthy.
	step    int
	addon   string
	since   time.Time
	timeout time.Duration
	ids     object.ObjMetadataSet
	checker HealthChecker
	// objects is the number of the step's objects the last apply sent:
	// fewer than the step holds when some were left to another owner.
	objects int
	// expired is set once the deadline passed and was reported (the pair is
	// Failed); PollHealth then reports only a recovery.
	expired bool
	// watch follows the health of ids between passes (see watchAwaiting).
	watch *healthWatch
}

func (a *awaiting) deadline() time.Time { return a.since.Add(a.timeout) }

// resumeAt returns the index of the step a pass of the request resumes at:
// the awaiting step of the same render hash, else 0, forgetting an
// awaiting step of another render.
func (c *Cluster) resumeAt(req Request) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.awaiting[req.Profile]
	if a != nil && a.renderHash == req.RenderHash && a.step < len(req.Steps) {
		return a.step
	}
	c.dropAwaiting(req.Profile)
	return 0
}

// await records that step i of the request waits for the health of ids
// and returns the record. The deadline starts with the step's first wait,
// and again when this apply changed the step's objects (changed). The
// step's objects are watched through cl until the record is dropped; gens
// are the generations the apply returned.
func (c *Cluster) await(req Request, cl *Client, i int, ids object.ObjMetadataSet, gens map[object.ObjMetadata]int64, objects int, timeout time.Duration, changed bool) *awaiting {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.awaiting[req.Profile]
	if a == nil || a.renderHash != req.RenderHash || a.step != i || changed {
		c.dropAwaiting(req.Profile)
		a = &awaiting{renderHash: req.RenderHash, step: i, addon: req.Steps[i].Addon, since: time.Now()}
		c.awaiting[req.Profile] = a
	}
	if a.watch != nil && (a.watch.cl != cl || !slices.Equal(a.ids, ids)) {
		a.watch.cancel()
		a.watch = nil
	}
	a.timeout, a.ids, a.checker, a.objects = timeout, ids, req.Health, objects
	if a.watch == nil {
		a.watch = c.watchAwaiting(req.Profile, cl, ids, req.Health, gens)
	}
	return a
}

// watchAwaiting watches the objects of an awaiting step and queues the
// cluster (the ready function PollHealth was last given) as soon as they
// are all healthy or one is degraded, without waiting for a poll.
func (c *Cluster) watchAwaiting(profile string, cl *Client, ids object.ObjMetadataSet, checker HealthChecker, gens map[object.ObjMetadata]int64) *healthWatch {
	h := newHealthReader(cl.Mapper, checker, nil) // the pass logs script errors
	var told atomic.Bool
	onChange := func() {
		if hs, degraded := h.summary(ids); (hs.Progressing == 0 || degraded) && told.CompareAndSwap(false, true) {
			c.m.notifyReady(c.name)
		}
	}
	return startHealthWatch(c.m.ctx, cl, h, ids, healthWatchOptions{profile: profile, gens: gens,
		interval: c.m.opts.HealthPollInterval, log: c.log(), onChange: onChange})
}

func (c *Cluster) stopAwaiting(profile string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropAwaiting(profile)
}

// dropAwaiting forgets a profile's awaiting step and ends its watch; c.mu
// is held.
func (c *Cluster) dropAwaiting(profile string) {
	if a := c.awaiting[profile]; a != nil && a.watch != nil {
		a.watch.cancel()
	}
	delete(c.awaiting, profile)
}

// dropAllAwaiting forgets every awaiting step; c.mu is held.
func (c *Cluster) dropAllAwaiting() {
	for profile := range c.awaiting {
		c.dropAwaiting(profile)
	}
}

// Awaiting reports whether some profile of the cluster waits for health
// within its health timeout.
func (c *Cluster) Awaiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.awaiting {
		if !a.expired {
			return true
		}
	}
	return false
}

// Awaiting reports whether some profile of some cluster waits for health
// within its health timeout.
func (m *Manager) Awaiting() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.clusters {
		if c.Awaiting() {
			return true
		}
	}
	return false
}

// observe is the health check of an Async step: one read of the objects
// not healthy as applied. It returns nil when all are healthy, a
// *HealthError when one is degraded or the step's deadline passed, and
// errAwaiting otherwise.
func (p *pass) observe(ctx context.Context, i int, objs []*unstructured.Unstructured, changed bool) error {
	ids := object.UnstructuredSetToObjMetadataSet(objs)
	timeout := p.healthTimeout()
	if err := readHealth(ctx, p.cl, p.health, p.watched(i, p.notCurrent(ids))); err != nil {
		return &HealthError{Timeout: timeout, Err: err}
	}
	hs, degraded := p.health.summary(ids)
	if degraded || hs.Progressing == 0 {
		p.c.stopAwaiting(p.req.Profile)
		p.res.Health.merge(hs)
		if degraded {
			return &HealthError{Degraded: true, Timeout: timeout, Unhealthy: hs.Unhealthy, Err: errors.New("degraded")}
		}
		return nil
	}
	// The poll between passes reads only what is not healthy yet: a
	// Deployment, not the ConfigMaps and Services beside it.
	pending := p.health.pending(ids)
	a := p.c.await(p.req, p.cl, i, pending, p.generations(pending), len(objs), timeout, changed)
	p.res.Health.merge(hs)
	if !time.Now().Before(a.deadline()) {
		p.c.mu.Lock()
		a.expired = true
		p.c.mu.Unlock()
		return &HealthError{Timeout: timeout, Unhealthy: hs.Unhealthy, Err: errHealthDeadline}
	}
	p.res.Waiting = fmt.Sprintf("add-on %s: waiting until %s for %s", a.addon,
		a.deadline().UTC().Format(time.RFC3339), strings.Join(hs.Unhealthy, "; "))
	return errAwaiting
}

func (p *pass) healthTimeout() time.Duration {
	if p.req.HealthTimeout > 0 {
		return p.req.HealthTimeout
	}
	return p.c.m.opts.HealthTimeout
}

// readHealth reads the status of each object once (a GET each, a few in
// flight) through h, which records it for h.summary.
func readHealth(ctx context.Context, cl *Client, h *healthReader, ids object.ObjMetadataSet) error {
	if len(ids) == 0 {
		return nil
	}
	reader, err := clusterreader.NewDirectClusterReader(cl.Kube, cl.Mapper, ids)
	if err != nil {
		return err
	}
	var g errgroup.Group
	g.SetLimit(8)
	for _, id := range ids {
		g.Go(func() error {
			_, err := h.ReadStatus(ctx, reader, id)
			return err
		})
	}
	return g.Wait()
}

// watched takes the statuses of ids that the watch of the step the pass
// re-checks (step i, same client) has seen, and returns the others, which
// are to be read.
func (p *pass) watched(i int, ids object.ObjMetadataSet) object.ObjMetadataSet {
	if p.awaited == nil || p.awaited.step != i || p.awaited.watch == nil || p.awaited.watch.cl != p.cl {
		return ids
	}
	w := p.awaited.watch
	polled := w.Polled()
	var rest object.ObjMetadataSet
	for _, id := range ids {
		w.h.mu.Lock()
		rs := w.h.last[id]
		suspended := w.h.suspended[id]
		w.h.mu.Unlock()
		if rs == nil || polled.Contains(id) {
			rest = append(rest, id)
			continue
		}
		p.health.mu.Lock()
		p.health.last[id], p.health.suspended[id] = rs, suspended
		p.health.mu.Unlock()
	}
	return rest
}

// notifyReady calls the ready function PollHealth was last given.
func (m *Manager) notifyReady(cluster string) {
	m.readyMu.Lock()
	ready := m.ready
	m.readyMu.Unlock()
	if ready != nil {
		ready(cluster)
	}
}

// HealthPollInterval is how often PollHealth should be called.
func (m *Manager) HealthPollInterval() time.Duration { return m.opts.HealthPollInterval }

// PollHealth checks once the objects of every Async step that waits for
// health, on every cluster, and calls ready (from several goroutines) with
// each cluster where such a step turned healthy or degraded or its deadline
// passed: the cluster's next reconciliation resumes it. It never writes.
func (m *Manager) PollHealth(ctx context.Context, ready func(cluster string)) {
	m.readyMu.Lock()
	m.ready = ready
	m.readyMu.Unlock()
	m.mu.Lock()
	var waiting []*Cluster
	for _, c := range m.clusters {
		c.mu.Lock()
		if len(c.awaiting) > 0 {
			waiting = append(waiting, c)
		}
		c.mu.Unlock()
	}
	m.mu.Unlock()
	sort.Slice(waiting, func(i, j int) bool { return waiting[i].name < waiting[j].name })
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, c := range waiting {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if c.healthChanged(ctx) {
				ready(c.name)
			}
		})
	}
	wg.Wait()
}

// healthChanged reports whether an awaiting step of the cluster should be
// resumed.
// A deadline that passed is reported once: the step counts as expired
// from then on, even when the cluster cannot be reached to say so.
func (c *Cluster) healthChanged(ctx context.Context) bool {
	c.mu.Lock()
	steps := make([]awaiting, 0, len(c.awaiting))
	expired := false
	for _, a := range c.awaiting {
		if !a.expired && !time.Now().Before(a.deadline()) {
			a.expired, expired = true, true
		}
		steps = append(steps, *a)
	}
	cl := c.client
	c.mu.Unlock()
	if expired {
		return true
	}
	for _, a := range steps {
		h, read := newHealthReader(cl.Mapper, a.checker, nil), a.ids // the pass logs script errors
		if a.watch != nil && a.watch.cl == cl {
			h, read = a.watch.h, a.watch.h.pending(a.watch.Polled())
		}
		if err := readHealth(ctx, cl, h, read); err != nil {
			c.log().Debug("health poll failed", "error", err)
			continue
		}
		hs, degraded := h.summary(a.ids)
		if hs.Progressing == 0 || (degraded && !a.expired) {
			return true
		}
	}
	return false
}
