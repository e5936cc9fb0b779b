package app

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPprofHandler serves the profiles of this process: the index lists
// them and the heap profile parses as one.
func TestPprofHandler(t *testing.T) {
	srv := httptest.NewServer(pprofHandler())
	defer srv.Close()
	get := func(path string) []byte {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v\n%s", path, resp.StatusCode, err, b)
		}
		return b
	}
	if idx := string(get("/debug/pprof/")); !strings.Contains(idx, "heap") || !strings.Contains(idx, "goroutine") {
		t.Errorf("index lists no heap or goroutine profile:\n%s", idx)
	}
	if heap := get("/debug/pprof/heap"); !bytes.HasPrefix(heap, []byte{0x1f, 0x8b}) { // gzipped protobuf
		t.Errorf("heap profile is not gzipped: % x", heap[:min(len(heap), 8)])
	}
	if heap := string(get("/debug/pprof/heap?debug=1")); !strings.HasPrefix(heap, "heap profile:") {
		t.Errorf("heap profile in text:\n%.200s", heap)
	}
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the pprof listener serves /metrics: %d", resp.StatusCode)
	}
}
