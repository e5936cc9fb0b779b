package testenv

import (
	"context"
	"fmt"
	"time"
)

// waitReady polls probe until it succeeds, the process exits, ctx ends or
// timeout passes. Errors carry the tail of the process's log.
func waitReady(ctx context.Context, p *process, timeout time.Duration, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		probeErr := probeOnce(ctx, probe)
		if probeErr == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.exitError()
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s (last probe: %v); last lines of %s:\n%s",
				p.name, timeout, probeErr, p.logPath, p.logTail())
		case <-tick.C:
		}
	}
}

// probeOnce runs probe with a short deadline of its own.
func probeOnce(ctx context.Context, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return probe(ctx)
}
