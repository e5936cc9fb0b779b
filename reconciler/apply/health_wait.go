package apply

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa/utils"
)

// waitHealth waits until every object of ids is healthy, one is Failed
// (fail fast) or timeout passes, as ssa's WaitForSetWithContext with
// FailFast does and with its messages, but watching the objects (see
// healthWatch) instead of reading each one every poll interval: only the
// kinds that cannot be watched are polled. It returns ctx's error when ctx
// ends first. No goroutine of the wait outlives it.
func (p *pass) waitHealth(ctx context.Context, ids object.ObjMetadataSet, timeout time.Duration) error {
	if len(ids) == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w := startHealthWatch(wctx, p.cl, p.health, ids, healthWatchOptions{profile: p.req.Profile,
		gens: p.generations(ids), interval: p.c.m.opts.HealthPollInterval, log: p.c.log()})
	defer w.stop()
	tick := time.NewTicker(p.c.m.opts.HealthPollInterval)
	defer tick.Stop()
	polled := map[object.ObjMetadata]bool{}
	for {
		if done, failed := p.health.settled(ids); done || failed {
			return p.health.waitError(ids, false)
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return p.health.waitError(ids, true)
		case <-w.Changed():
			p.pollNew(wctx, w, polled)
		case <-tick.C:
			p.poll(wctx, w.Polled())
		}
	}
}

// pollNew reads at once the objects that just fell back to polling.
func (p *pass) pollNew(ctx context.Context, w *healthWatch, polled map[object.ObjMetadata]bool) {
	var fresh object.ObjMetadataSet
	for _, id := range w.Polled() {
		if !polled[id] {
			polled[id] = true
			fresh = append(fresh, id)
		}
	}
	p.poll(ctx, fresh)
}

// poll reads the objects of ids that are not healthy as last read.
func (p *pass) poll(ctx context.Context, ids object.ObjMetadataSet) {
	if err := readHealth(ctx, p.cl, p.health, p.health.pending(ids)); err != nil && ctx.Err() == nil {
		p.c.log().Debug("health poll failed", "error", err)
	}
}

// generations returns the generations the apply returned for ids.
func (p *pass) generations(ids object.ObjMetadataSet) map[object.ObjMetadata]int64 {
	gens := map[object.ObjMetadata]int64{}
	for _, id := range ids {
		if g, ok := p.gens.Load(id); ok {
			gens[id] = g.(int64)
		}
	}
	return gens
}

// settled reports whether every object of ids is healthy (done), or one
// failed (fail fast), as last read.
func (h *healthReader) settled(ids object.ObjMetadataSet) (done, failed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	done = true
	for _, id := range ids {
		rs := h.last[id]
		switch {
		case rs != nil && rs.Status == status.FailedStatus:
			return false, true
		case rs == nil || rs.Status != status.CurrentStatus:
			done = false
		}
	}
	return done, false
}

// waitError is ssa's error of a wait that ended: nil when every object is
// healthy; the failed objects ("failed early due to stalled resources");
// or, when the timeout passed, every object not healthy ("timeout waiting
// for").
func (h *healthReader) waitError(ids object.ObjMetadataSet, timedOut bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []string
	for _, id := range ids {
		rs := h.last[id]
		switch {
		case rs == nil:
			errs = append(errs, "can't determine status for "+utils.FmtObjMetadata(id))
		case rs.Status == status.FailedStatus, timedOut && rs.Status != status.CurrentStatus:
			msg := fmt.Sprintf("%s status: '%s'", utils.FmtObjMetadata(id), rs.Status)
			if rs.Error != nil {
				msg += ": " + rs.Error.Error()
			}
			errs = append(errs, msg)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	msg := "failed early due to stalled resources"
	if timedOut {
		msg = "timeout waiting for"
	}
	return fmt.Errorf("%s: [%s]", msg, strings.Join(errs, ", "))
}
