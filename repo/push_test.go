package repo

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestPushesCloseTheirConnections: go-git leaves the response of an HTTP
// push unread; every status commit kept a connection, its goroutines and
// the pack it sent until the process ended.
func TestPushesCloseTheirConnections(t *testing.T) {
	src, _, rev := httpSource(t, t.TempDir())
	ctx := context.Background()
	push := func(i int) {
		if _, err := src.CommitAndPush(ctx, statusRequest(statusFiles(10, i), rev)); err != nil {
			t.Fatal(err)
		}
	}
	push(0) // connections the Source keeps for good (idle, reused)
	before := runtime.NumGoroutine()
	for i := 1; i <= 20; i++ {
		push(i)
	}
	// Closing a connection ends its goroutines a moment later.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before+4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+4 {
		t.Errorf("%d goroutines after 20 more pushes, %d before: pushes leave their connections open", n, before)
	}
}
