package lua

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrentCalls runs 100 goroutines against one Runner: shared
// compiled scripts, fresh states, each with its own object, some timing out.
// Run it with -race.
func TestConcurrentCalls(t *testing.T) {
	r := NewRunner(Options{Timeout: 10 * time.Second, CacheSize: 8})
	health := Script{Name: "widget", Source: argoStyle}
	size := Script{Name: "size", Source: readyNodes}
	loop := Script{Name: "loop", Source: "while true do end"}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range 100 {
		wg.Go(func() {
			errs <- concurrentCall(t, r, g, health, size, loop)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if st := r.Stats(); st.Compiles > 3+100 {
		t.Errorf("stats %+v", st)
	}
}

func concurrentCall(t *testing.T, r *Runner, g int, health, size, loop Script) error {
	ctx := t.Context()
	switch g % 4 {
	case 0:
		hs, err := r.Health(ctx, health, widget(int64(g), int64(g), false, map[string]any{"type": "Ready", "status": "True", "message": fmt.Sprint(g)}))
		if err != nil || hs != (HealthStatus{Healthy, fmt.Sprint(g)}) {
			return fmt.Errorf("goroutine %d: %+v %v", g, hs, err)
		}
	case 1:
		m, err := r.EvaluateAggregated(ctx, size, nodes(g%10, 2))
		if err != nil || m.Matching != (g%10 >= 5) {
			return fmt.Errorf("goroutine %d: %+v %v", g, m, err)
		}
	case 2:
		v, err := r.Run(ctx, Script{Name: "own", Source: fmt.Sprintf("leak = %d return leak", g)}, nil)
		if err != nil || v != int64(g) {
			return fmt.Errorf("goroutine %d: %v %v", g, v, err)
		}
	case 3:
		if g%12 == 3 {
			ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			if _, err := r.Run(ctx, loop, nil); !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("goroutine %d: the loop did not time out", g)
			}
		}
	}
	return nil
}
