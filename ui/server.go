package ui

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// KeepAlive is how often a live stream sends a comment to keep proxies
// from closing it.
const KeepAlive = 15 * time.Second

// Options configure a Server.
type Options struct {
	// History is the status branch's history (required).
	History History
	// Log receives the pages' errors; nil discards them.
	Log *slog.Logger
	// DashboardURL, when set, is linked from every page: the status
	// branch's README.md on the Git host.
	DashboardURL string
	// Title names the fleet in every page's title (default "regatta").
	Title string
	// SinceBound is how many status commits the UI walks back to find
	// since when each problem has been so (SinceBound when 0).
	SinceBound int
}

// Server serves the UI's pages. Its methods are safe for concurrent use.
type Server struct {
	opts      Options
	pages     pages
	keepAlive time.Duration
	// assets names the static files' content, in their URLs, so that a
	// browser's cached copy is not used after an upgrade.
	assets string

	// boot tells this process's versions from another's (a restart
	// counts moves from 0 again).
	boot string

	// since finds since when the head's problems have been so.
	since *sinceTracker

	mu        sync.Mutex
	moves     uint64
	live      *liveFrame
	branchFP  map[string]uint64 // fingerprint of the branch head, by commit
	authority func(cluster string) string
	streams   map[chan string]struct{}
}

// liveFrame is a daemon's newest status, as Live received it.
type liveFrame struct {
	snap status.Snapshot
	at   time.Time
	fp   uint64
}

// New returns a Server over opts.History.
func New(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Title == "" {
		opts.Title = "regatta"
	}
	if opts.SinceBound <= 0 {
		opts.SinceBound = SinceBound
	}
	s := &Server{opts: opts, pages: parsePages(), keepAlive: KeepAlive, assets: assetsVersion(), boot: strconv.FormatInt(time.Now().UnixNano(), 36),
		branchFP: map[string]uint64{}, streams: map[chan string]struct{}{}}
	s.since = newSinceTracker(opts.History, opts.SinceBound, opts.Log, s.head, s.bump)
	return s
}

// Close stops the Server's work in the background (finding since when
// the problems are so) and waits for it.
func (s *Server) Close() { s.since.close() }

// Handler serves the pages, the live stream, /-/healthz and the static
// files. Who may see what comes from the access.Viewer in each request's
// context (the access middleware wraps this handler).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /-/static/", http.StripPrefix("/-/static/", cacheFor(time.Hour, http.FileServerFS(static))))
	mux.HandleFunc("GET /-/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /-/stream", s.serveStream)
	mux.HandleFunc("GET /{$}", s.serveFleet)
	mux.HandleFunc("GET /clusters/{name}", s.serveCluster)
	mux.HandleFunc("GET /profiles/{name}", s.serveProfile)
	mux.HandleFunc("GET /revisions", s.serveRevisions)
	mux.HandleFunc("GET /compare", s.serveCompare)
	mux.HandleFunc("GET /events", s.serveEvents)
	mux.HandleFunc("/", s.serveNotFound)
	return securityHeaders(mux)
}

// Live makes a daemon's newest status the head of the UI while the status
// branch has not caught up with it, and tells the live streams.
func (s *Server) Live(snap status.Snapshot) {
	lf := &liveFrame{snap: snap, at: time.Now(), fp: fingerprint(snap)}
	s.mu.Lock()
	s.live = lf
	s.mu.Unlock()
	s.Moved()
}

// Tenants are the tenants of the newest status (status.Tenants), for the
// access gate's reviews; none when it cannot be read.
func (s *Server) Tenants(ctx context.Context) []string {
	f, _, err := s.head(ctx)
	if err != nil {
		return nil
	}
	return status.Tenants(f.Snapshot)
}

// Authority sets this process's word on who speaks for a cluster (a
// daemon's Speaker), shown on the cluster page.
func (s *Server) Authority(f func(cluster string) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authority = f
}

// Moved tells the live streams that the view may have changed (the
// History's head moved), and starts finding since when the new head's
// problems have been so (in the background; the streams hear again when
// that is done).
func (s *Server) Moved() {
	s.bump()
	s.since.kick()
}

// bump tells the live streams that the view changed.
func (s *Server) bump() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.moves++
	v := s.versionLocked()
	for ch := range s.streams {
		select { // keep only the newest version for a slow reader
		case <-ch:
		default:
		}
		ch <- v
	}
}

// version names the view's state: it changes at each Moved or Live, and
// with the process.
func (s *Server) version() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.versionLocked()
}

func (s *Server) versionLocked() string { return s.boot + "." + strconv.FormatUint(s.moves, 10) }

func (s *Server) authorityOf(cluster string) string {
	s.mu.Lock()
	f := s.authority
	s.mu.Unlock()
	if f == nil {
		return ""
	}
	return f(cluster)
}

// securityHeaders keeps the pages from being framed or sniffed, and lets
// them run only their own script and style.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}

// assetsVersion hashes the embedded static files.
func assetsVersion() string {
	h := sha256.New()
	fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := staticFS.ReadFile(p)
			h.Write([]byte(p))
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func cacheFor(d time.Duration, h http.Handler) http.Handler {
	v := "public, max-age=" + strconv.Itoa(int(d.Seconds()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", v)
		h.ServeHTTP(w, r)
	})
}
