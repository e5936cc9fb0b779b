package browser

import (
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

const testPage = `<!doctype html><title>fleet · test</title>
<main id="main" data-version="1">
<form id="filters" method="get" action="/"><input name="q" value=""><button>go</button></form>
<table id="matrix">%s</table>
<p id="message"></p>
</main>
<script>window.__loaded = "token"; console.error("boom %%d", 42);</script>`

// testServer serves a page whose matrix lists the clusters whose name
// holds ?q=, and a 403 page.
func testServer(t *testing.T) *httptest.Server {
	clusters := []string{"prod-1", "prod-2", "dev-1"}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/forbidden" {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		if r.URL.Path == "/whoami" {
			fmt.Fprintf(w, "<title>%s</title>", r.Header.Get("Authorization"))
			return
		}
		var rows strings.Builder
		for _, c := range clusters {
			if strings.Contains(c, r.URL.Query().Get("q")) {
				fmt.Fprintf(&rows, `<tr data-cluster="%s"><td>%s</td></tr>`, c, c)
			}
		}
		fmt.Fprintf(w, testPage, rows.String())
	}))
	t.Cleanup(s.Close)
	return s
}

// TestPage drives a page through every helper: navigate, read, count,
// fill and submit a form, poll, screenshot, console, headers.
func TestPage(t *testing.T) {
	s := testServer(t)
	t.Setenv(EnvArtifacts, t.TempDir())
	p := Start(t).NewPage(t)
	if code := p.Go(s.URL + "/"); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	p.WaitFor("#matrix")
	if got := p.Title(); got != "fleet · test" {
		t.Errorf("title %q", got)
	}
	if n := p.Count("tr[data-cluster]"); n != 3 {
		t.Errorf("%d rows, want 3", n)
	}
	if v, ok := p.Attr("#main", "data-version"); !ok || v != "1" {
		t.Errorf("data-version = %q %v", v, ok)
	}
	if _, ok := p.Attr("#nothing", "x"); ok {
		t.Error("an absent element has an attribute")
	}
	if got := p.Attrs("tr", "data-cluster"); strings.Join(got, ",") != "prod-1,prod-2,dev-1" {
		t.Errorf("clusters %v", got)
	}
	if got := p.Text("tr[data-cluster=dev-1] td"); got != "dev-1" {
		t.Errorf("text %q", got)
	}
	p.Fill("#filters input[name=q]", "prod")
	p.Submit("#filters")
	if n := p.Count("tr[data-cluster]"); n != 2 || !strings.Contains(p.URL(), "q=prod") {
		t.Errorf("after the filter: %d rows at %s", n, p.URL())
	}
	p.Injected("__pwned")
	if Eval[string](p, "window.__loaded") != "token" {
		t.Error("window.__loaded is not set")
	}
	Eval[any](p, `setTimeout(() => document.querySelector("#message").textContent = "later", 200)`)
	p.Eventually(5*time.Second, "the message", `document.querySelector("#message").textContent == "later"`)
	if fcp := p.FirstContentfulPaint(); fcp <= 0 || fcp > 10*time.Second {
		t.Errorf("first contentful paint %v", fcp)
	}
	shot := p.Screenshot("fleet")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() != ViewportWidth {
		t.Errorf("screenshot %s: %v, %v wide", shot, err, img.Bounds().Dx())
	}
	for deadline := time.Now().Add(5 * time.Second); len(p.Errors()) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // the console's messages arrive on their own goroutine
	}
	if errs := p.Errors(); len(errs) == 0 || !strings.Contains(errs[0].Text, "boom 42") {
		t.Errorf("console errors %v", errs)
	}
	if code := p.Go(s.URL + "/forbidden"); code != http.StatusForbidden {
		t.Errorf("status %d, want 403", code)
	}
	p.SetHeader("Authorization", "Bearer t0")
	p.Go(s.URL + "/whoami")
	if got := p.Title(); got != "Bearer t0" {
		t.Errorf("header sent: %q", got)
	}
}
