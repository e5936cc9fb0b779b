package ui

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// readEvent reads the stream up to the next event and returns its name
// and data; comments are skipped.
func readEvent(t *testing.T, r *bufio.Reader) (string, string) {
	t.Helper()
	var name, data string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read the stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && name != "":
			return name, data
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// The stream sends the current version, then "moved" after Live; the
// daemon's newer status becomes the head, marked live; it ends when the
// client goes.
func TestStreamMovedAfterLive(t *testing.T) {
	s, _, ts := newTestServer(t, fleetViewer)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/-/stream", nil)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream Content-Type %q", ct)
	}
	r := bufio.NewReader(resp.Body)
	first := s.version()
	if name, data := readEvent(t, r); name != "moved" || data != first {
		t.Fatalf("first event %s %q, want moved %s", name, data, first)
	}
	live := testFleet(strings.Repeat("3", 40))
	live.Clusters[0].Profiles[1].State = "Failed"
	s.Live(live)
	name, next := readEvent(t, r)
	if name != "moved" || next == first {
		t.Fatalf("after Live: %s %q, want moved with a new version", name, next)
	}
	settle(t, s) // the starts of the live frame's problems move it once more
	next = s.version()
	body := mustGet(t, ts, "/")
	has(t, "fleet page after Live", body, `data-version="`+next+`"`, `data-live="true"`, "Live, not yet on the status branch",
		`<li data-cluster="prod-1" data-profile="web" data-state="Failed">`, `data-commit=""`)
	// failing in the daemon's status only: since that status
	s.mu.Lock()
	liveAt := s.live.at.UTC().Format(time.RFC3339)
	s.mu.Unlock()
	has(t, "fleet page after Live", body, `<span class="state s-Failed">Failed</span> <span class="msg since" data-since="`+liveAt+`">`)

	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for s.streamCount() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stream's handler did not end when its client went")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Once the status branch holds what Live showed, the branch's frame is
// the head again; a Live status older than the branch's head is not shown.
func TestLiveGivesWayToTheBranch(t *testing.T) {
	s, h, ts := newTestServer(t, fleetViewer)
	live := testFleet(strings.Repeat("3", 40))
	s.Live(live)
	has(t, "head while the branch lags", mustGet(t, ts, "/"), `data-live="true"`)
	h.add(Frame{Commit: "cccc" + strings.Repeat("0", 36), Time: time.Now().Add(-time.Second), Snapshot: testFleet(strings.Repeat("3", 40))})
	s.Moved()
	body := mustGet(t, ts, "/")
	hasNot(t, "head once the branch has the live status", body, `data-live="true"`)
	has(t, "head once the branch has the live status", body, `data-commit="cccc`)
	h.add(Frame{Commit: "dddd" + strings.Repeat("0", 36), Time: time.Now().Add(time.Hour), Snapshot: testFleet(strings.Repeat("4", 40))})
	has(t, "head once the branch is newer", mustGet(t, ts, "/"), `data-commit="dddd`)
}

// A keepalive comment keeps the stream open when nothing moves.
func TestStreamKeepAlive(t *testing.T) {
	s, _, ts := newTestServer(t, fleetViewer)
	s.keepAlive = 20 * time.Millisecond
	resp, err := ts.Client().Get(ts.URL + "/-/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	readEvent(t, r)
	line, err := r.ReadString('\n')
	if err != nil || line != ": keepalive\n" {
		t.Fatalf("after the first event: %q, %v; want a keepalive comment", line, err)
	}
}

// streamCount is how many live streams are open.
func (s *Server) streamCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.streams)
}

// Before the status branch exists the pages say it cannot be read; a
// daemon's status (Live) is shown as soon as it comes.
func TestLiveBeforeTheBranchExists(t *testing.T) {
	s := New(Options{History: &memHistory{}})
	ts := httptest.NewServer(asViewer(fleetViewer, s.Handler()))
	defer ts.Close()
	if code, body := get(t, ts, "/"); code != http.StatusBadGateway || !strings.Contains(body, "the status branch could not be read") {
		t.Errorf("without a status branch: %d, want 502 saying so:\n%.500s", code, body)
	}
	s.Live(testFleet(rev1))
	has(t, "fleet page from Live alone", mustGet(t, ts, "/"), `data-live="true"`, `<tr data-cluster="prod-1"`)
}
