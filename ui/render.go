package ui

import (
	"bytes"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// FragmentHeader asks for the page's main element only: the live script
// sends it when the view moved, and swaps <main id="main"> with the
// answer.
const FragmentHeader = "X-Regatta-Fragment"

// pages are the parsed templates, by page.
type pages map[string]*template.Template

var pageNames = []string{"fleet", "cluster", "profile", "revisions", "compare", "events", "error"}

func parsePages() pages {
	out := pages{}
	for _, name := range pageNames {
		t := template.New(name).Funcs(funcs)
		out[name] = template.Must(t.ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}

var funcs = template.FuncMap{
	"text":   text,
	"short":  status.ShortRevision,
	"when":   when,
	"err":    errText,
	"add":    func(a, b int) int { return a + b },
	"mark":   mark,
	"digest": status.ShortDigest,
}

// marks are the matrix's short forms of pair states (the cell's title
// and data-state name the state).
var marks = map[string]string{
	status.StateApplied: "✓", status.StateFailed: "✕", status.StateConflict: "!", status.StateProgressing: "…",
	status.StateWaitingForDependency: "⧗", status.StateWaitingForRollout: "⧗", status.StatePaused: "‖",
	status.StateDryRun: "?", status.StateWithdrawn: "–",
}

func mark(state string) string {
	if m, ok := marks[state]; ok {
		return m
	}
	return "•"
}

// text is a text a profile, tenant or cluster controls, made safe to
// show: printable (status.Printable), bounded; html/template escapes it.
func text(s string) string { return status.Bounded(status.Printable(s)) }

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// errText places an error: file:line, object, message, made safe to
// show (text).
func errText(e *status.Error) string { return text(errString(e)) }

// errString places an error as it is: file:line, object, message.
func errString(e *status.Error) string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Object != "" {
		b.WriteString(e.Object + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// pageData is what every page's template gets.
type pageData struct {
	Site  string
	Title string
	// Assets names the static files' version (?v= of their URLs).
	Assets string
	// Heading is the title without the site's name; Here the page's URL
	// without ?at= (back to now), unless the page sets its own.
	Heading, Here string
	Nav           string
	Version       string
	DashboardURL  string
	View          view
	Body          any
}

// Link is path with the page's ?at= kept (time travel is shared by URL).
func (p pageData) Link(path string) string {
	if p.View.At == "" {
		return path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + "at=" + url.QueryEscape(p.View.At)
}

// ClusterURL and ProfileURL link to a cluster's and a profile's page.
func (p pageData) ClusterURL(name string) string { return p.Link("/clusters/" + url.PathEscape(name)) }
func (p pageData) ProfileURL(name string) string { return p.Link("/profiles/" + url.PathEscape(name)) }

// render writes a page, or only its main element when the live script
// asks (FragmentHeader).
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, name string, d pageData) {
	d.Site, d.DashboardURL, d.Assets = s.opts.Title, s.opts.DashboardURL, s.assets
	if d.Version == "" {
		d.Version = s.version()
	}
	d.Heading, d.Title = d.Title, d.Title+" · "+s.opts.Title
	if d.Here == "" {
		d.Here = hereURL(r)
	}
	tmpl := "layout"
	if r.Header.Get(FragmentHeader) == "main" {
		tmpl = "main"
	}
	var b bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&b, tmpl, d); err != nil {
		s.opts.Log.Error("ui: render page", "page", name, "path", r.URL.Path, "error", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Vary", FragmentHeader+", Cookie, Authorization")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

// errorBody is the error page's content.
type errorBody struct {
	Code    int
	Message string
}

// fail answers with the error page: 400 for a bad ?at=, 404 for a commit
// or time the history lacks, 502 when the history cannot be read.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := http.StatusBadGateway, "the status branch could not be read; see the server's log"
	switch {
	case errors.Is(err, errBadAt):
		code, msg = http.StatusBadRequest, err.Error()
	case errors.Is(err, ErrUnknownCommit):
		code, msg = http.StatusNotFound, "the status branch's history has no commit "+r.URL.Query().Get("at")
	case errors.Is(err, ErrBeforeHistory):
		code, msg = http.StatusNotFound, "that time is before the oldest status commit kept"
	default:
		s.opts.Log.Error("ui: read the status history", "path", r.URL.Path, "error", err)
	}
	s.errorPage(w, r, code, msg)
}

func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, code int, msg string) {
	s.render(w, r, code, "error", pageData{Title: http.StatusText(code), Body: errorBody{Code: code, Message: msg}})
}

// forbidden answers a cluster or profile page the viewer may not see, and
// one that does not exist, alike (names do not leak); only the
// whole-fleet viewer is told 404.
func (s *Server) forbidden(w http.ResponseWriter, r *http.Request, v view, what string) {
	if v.viewer.Fleet {
		s.errorPage(w, r, http.StatusNotFound, "no "+what+" of that name in this status frame")
		return
	}
	s.errorPage(w, r, http.StatusForbidden, "you may not see this "+what+", or there is none of that name")
}

func (s *Server) serveNotFound(w http.ResponseWriter, r *http.Request) {
	s.errorPage(w, r, http.StatusNotFound, "no page here")
}

// hereURL is the request's URL without ?at=.
func hereURL(r *http.Request) string {
	q := r.URL.Query()
	q.Del("at")
	if len(q) == 0 {
		return r.URL.Path
	}
	return r.URL.Path + "?" + q.Encode()
}
