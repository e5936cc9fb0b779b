package ui

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// ?at= shows the frame in force at a commit or a time, marked as time
// travel, on every page; links keep it; a bad or unknown ?at= says why.
func TestTimeTravel(t *testing.T) {
	_, _, ts := newTestServer(t, fleetViewer)
	for _, at := range []string{com1[:8], com1, "2026-12-01T10:30:00Z", "2026-12-01T10:30"} {
		body := mustGet(t, ts, "/?at="+url.QueryEscape(at))
		has(t, "fleet at "+at, body,
			`<div id="frame" data-commit="`+com1+`" data-at="2026-12-01T10:00:00Z" data-time-travel="true"`,
			`<p id="time-travel"`, `data-revision="`+rev1+`"`, `<a href="/">Back to now</a>`,
			`href="/clusters/prod-1?at=`+url.QueryEscape(at)+`"`, `href="/revisions?at=`+url.QueryEscape(at)+`"`,
			`<input type="hidden" name="at" value="`+at+`">`)
		hasNot(t, "fleet at "+at, body, rev2)
	}
	body := mustGet(t, ts, "/clusters/prod-1?at="+com1)
	has(t, "cluster page at com1", body, `data-time-travel="true"`, `<code>11111111</code>`, `<a href="/clusters/prod-1">Back to now</a>`)
	body = mustGet(t, ts, "/?state=Failed&at="+com1)
	has(t, "filtered fleet at com1", body, `<a href="/?state=Failed">Back to now</a>`)
	hasNot(t, "head", mustGet(t, ts, "/"), `data-time-travel`, `id="time-travel"`)

	for at, want := range map[string]int{"not-a-time": http.StatusBadRequest, "cafe0000": http.StatusNotFound, "2020-01-01T00:00:00Z": http.StatusNotFound} {
		if code, body := get(t, ts, "/?at="+at); code != want {
			t.Errorf("?at=%s: %d, want %d\n%.400s", at, code, want, body)
		}
	}
}

// The revisions page says where a folded history ends.
func TestRevisionsOfAFoldedHistory(t *testing.T) {
	_, h, ts := newTestServer(t, fleetViewer)
	h.folded = true
	body := mustGet(t, ts, "/revisions")
	has(t, "revisions of a folded history", body, `<p class="note" data-folded="true">`)
	if strings.Count(body, "data-folded") != 1 {
		t.Error("more than the oldest commit kept marked folded")
	}
}
