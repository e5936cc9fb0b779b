package repo

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"
)

// runWatcher runs w until the test ends and returns its events.
func runWatcher(t *testing.T, w *Watcher) <-chan Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan Event, 100)
	done := make(chan error)
	go func() { done <- w.Run(ctx, func(ev Event) { events <- ev }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return events
}

func nextEvent(t *testing.T, events <-chan Event, within time.Duration) Event {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(within):
		t.Fatalf("no event within %v", within)
		return Event{}
	}
}

func TestWatchLocalRepositorySeesCommitWithinASecond(t *testing.T) {
	for _, kind := range []string{"working clone", "bare"} {
		t.Run(kind, func(t *testing.T) {
			up := newUpstream(t, t.TempDir(), "fleet.git")
			path := up.work
			if kind == "bare" {
				path = up.bare
			}
			src, err := NewSource(Options{URL: path})
			if err != nil {
				t.Fatal(err)
			}
			// Polling is off in practice: only fsnotify can see the commit.
			events := runWatcher(t, NewWatcher(src, WatchOptions{Interval: time.Hour}))
			first := nextEvent(t, events, 5*time.Second)
			if first.Err != nil || first.Revision != up.head("main") {
				t.Fatalf("first event %+v", first)
			}
			for i := range 3 {
				up.write("clusters/a.yaml", string(rune('a'+i)))
				start := time.Now()
				rev := up.commit("change")
				ev := nextEvent(t, events, time.Second-time.Since(start))
				if ev.Err != nil || ev.Revision != rev {
					t.Fatalf("event %+v, want revision %s", ev, rev)
				}
				t.Logf("commit seen %v after git commit started", time.Since(start))
			}
		})
	}
}

func TestWatchTrigger(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	srv := newHTTPServer(t, root, nil)
	src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git"})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(src, WatchOptions{Interval: time.Hour})
	events := runWatcher(t, w)
	nextEvent(t, events, 5*time.Second)
	rev := up.commit("next")
	w.Trigger()
	if ev := nextEvent(t, events, 2*time.Second); ev.Revision != rev {
		t.Fatalf("event %+v, want %s", ev, rev)
	}
}

func TestWatchPolls(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	srv := newHTTPServer(t, root, nil)
	src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git"})
	if err != nil {
		t.Fatal(err)
	}
	events := runWatcher(t, NewWatcher(src, WatchOptions{Interval: 50 * time.Millisecond}))
	nextEvent(t, events, 5*time.Second)
	rev := up.commit("next")
	if ev := nextEvent(t, events, 2*time.Second); ev.Revision != rev {
		t.Fatalf("event %+v, want %s", ev, rev)
	}
}

// flakyProxy forwards to a Git server from a fixed address and can be
// taken down (connection refused) and brought back on the same address.
type flakyProxy struct {
	t      *testing.T
	addr   string
	target *url.URL
	srv    *httptest.Server
}

func newFlakyProxy(t *testing.T, target string) *flakyProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &flakyProxy{t: t, target: u}
	p.up("127.0.0.1:0")
	t.Cleanup(p.down)
	return p
}

func (p *flakyProxy) up(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.addr = l.Addr().String()
	p.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: httputil.NewSingleHostReverseProxy(p.target)}}
	p.srv.Start()
}

func (p *flakyProxy) down() {
	if p.srv != nil {
		p.srv.CloseClientConnections()
		p.srv.Close()
		p.srv = nil
	}
}

func TestWatchServerDownKeepsRevisionAndBacksOff(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	srv := newHTTPServer(t, root, basicAuth("u", "server-down-pass"))
	proxy := newFlakyProxy(t, srv.HTTPAddress())
	src, err := NewSource(Options{URL: "http://" + proxy.addr + "/fleet.git", Auth: Auth{Username: "u", Password: "server-down-pass"}})
	if err != nil {
		t.Fatal(err)
	}
	backoff := Backoff{Initial: 20 * time.Millisecond, Max: 400 * time.Millisecond, Factor: 2}
	events := runWatcher(t, NewWatcher(src, WatchOptions{Interval: 20 * time.Millisecond, Backoff: backoff}))
	first := nextEvent(t, events, 5*time.Second)
	if first.Err != nil {
		t.Fatal(first.Err)
	}

	proxy.down()
	next := up.commit("while down")
	var last time.Duration
	for i := 1; i <= 4; i++ {
		ev := nextEvent(t, events, 5*time.Second)
		if ev.Err == nil || ev.Revision != first.Revision || ev.Failures != i {
			t.Fatalf("failure %d: event %+v, want an error keeping %s", i, ev, first.Revision)
		}
		if ev.RetryIn != backoff.Delay(i) || ev.RetryIn <= last {
			t.Fatalf("failure %d: retry in %v after %v: not backing off", i, ev.RetryIn, last)
		}
		last = ev.RetryIn
		if src.Revision() != first.Revision {
			t.Fatalf("revision lost while down: %q", src.Revision())
		}
	}

	proxy.up(proxy.addr)
	for {
		ev := nextEvent(t, events, 5*time.Second)
		if ev.Err != nil {
			continue // a retry scheduled before the server came back
		}
		if ev.Revision != next || ev.Previous != first.Revision {
			t.Fatalf("after recovery: %+v, want %s", ev, next)
		}
		return
	}
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: 5 * time.Second, Factor: 2}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i, w := range want {
		if got := b.Delay(i + 1); got != w {
			t.Errorf("Delay(%d) = %v, want %v", i+1, got, w)
		}
	}
	if got := (Backoff{}).Delay(1); got != time.Second {
		t.Errorf("default first delay %v", got)
	}
}
