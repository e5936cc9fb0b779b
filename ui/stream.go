package ui

import (
	"fmt"
	"net/http"
	"time"
)

// serveStream is the live stream (Server-Sent Events): the current
// version at once, then an event "moved" with the new version whenever
// the view may have changed, and a comment every keepAlive. It ends when
// the request's context does (the client left, or the server shuts down).
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	ch := s.subscribe()
	defer s.unsubscribe(ch)
	tick := time.NewTicker(s.keepAlive)
	defer tick.Stop()
	if err := sendMoved(w, rc, s.version()); err != nil {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case v := <-ch:
			if sendMoved(w, rc, v) != nil {
				return
			}
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

func sendMoved(w http.ResponseWriter, rc *http.ResponseController, version string) error {
	if _, err := fmt.Fprintf(w, "event: moved\ndata: %s\n\n", version); err != nil {
		return err
	}
	return rc.Flush()
}

func (s *Server) subscribe() chan string {
	ch := make(chan string, 1)
	s.mu.Lock()
	s.streams[ch] = struct{}{}
	s.mu.Unlock()
	return ch
}

func (s *Server) unsubscribe(ch chan string) {
	s.mu.Lock()
	delete(s.streams, ch)
	s.mu.Unlock()
}
