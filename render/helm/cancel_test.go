package helm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestCancelledCallerDoesNotFailOthers: two renders share one slow index
// download; the one that gives up gets its own context error, the other
// still renders.
func TestCancelledCallerDoesNotFailOthers(t *testing.T) {
	files := http.FileServer(http.Dir(filepath.Join("testdata", "repo")))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	r := newTestRenderer(t)
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	var errShort, errLong error
	wg.Add(2)
	go func() { defer wg.Done(); _, errShort = r.Render(short, appRequest(srv.URL)) }()
	go func() { defer wg.Done(); _, errLong = r.Render(context.Background(), appRequest(srv.URL)) }()
	wg.Wait()
	if !errors.Is(errShort, context.DeadlineExceeded) {
		t.Errorf("short caller: %v", errShort)
	}
	if errLong != nil {
		t.Errorf("patient caller: %v", errLong)
	}
}
