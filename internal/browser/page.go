package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Page is one tab of a Browser. It keeps the messages the page writes to
// its console (calls of console.*, uncaught exceptions, the browser's log
// of the tab) from its opening on.
type Page struct {
	t       testing.TB
	b       *Browser
	ctx     context.Context
	timeout time.Duration

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

// NewPage opens a tab for the test t (a subtest may share its parent's
// Browser), closed when t ends.
func (b *Browser) NewPage(t testing.TB) *Page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	p := &Page{t: t, b: b, ctx: ctx, timeout: DefaultTimeout}
	if err := chromedp.Do(ctx); err != nil { // opens the tab
		t.Fatalf("opening a tab: %v", err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			p.mu.Lock()
			p.console = append(p.console, m)
			p.mu.Unlock()
		}
	}()
	return p
}

// SetHeader sends the header with every request of the page (e.g.
// Authorization: Bearer <token>).
func (p *Page) SetHeader(name, value string) {
	p.t.Helper()
	p.do("setting header "+name, setHeader(name, value))
}

// Go navigates to url, waits for the page to load and returns the HTTP
// status of its document.
func (p *Page) Go(url string) int {
	p.t.Helper()
	return p.navigate("navigating to "+url, chromedp.Navigate(url))
}

// WaitFor waits until an element matches the CSS selector.
func (p *Page) WaitFor(sel string) {
	p.t.Helper()
	p.do("waiting for "+sel, chromedp.WaitReady(chromedp.CSS(sel)))
}

// Count is the number of elements matching the CSS selector (0 when none;
// it does not wait).
func (p *Page) Count(sel string) int {
	p.t.Helper()
	return Eval[int](p, fmt.Sprintf("document.querySelectorAll(%s).length", jsString(sel)))
}

// Attr is the attribute of the first element matching sel; ok is false
// when there is no such element or attribute. It does not wait.
func (p *Page) Attr(sel, name string) (value string, ok bool) {
	p.t.Helper()
	v := Eval[*string](p, fmt.Sprintf("(e => e ? e.getAttribute(%s) : null)(document.querySelector(%s))", jsString(name), jsString(sel)))
	if v == nil {
		return "", false
	}
	return *v, true
}

// Attrs are the attribute of every element matching sel that has it, in
// document order.
func (p *Page) Attrs(sel, name string) []string {
	p.t.Helper()
	return Eval[[]string](p, fmt.Sprintf("[...document.querySelectorAll(%s)].filter(e => e.hasAttribute(%[2]s)).map(e => e.getAttribute(%[2]s))", jsString(sel), jsString(name)))
}

// Text is the text content of the first element matching sel ("" when
// none). It does not wait.
func (p *Page) Text(sel string) string {
	p.t.Helper()
	return Eval[string](p, fmt.Sprintf("(e => e ? e.textContent : '')(document.querySelector(%s))", jsString(sel)))
}

// Title is the document's title.
func (p *Page) Title() string {
	p.t.Helper()
	return Eval[string](p, "document.title")
}

// URL is the page's location.
func (p *Page) URL() string {
	p.t.Helper()
	return Eval[string](p, "location.href")
}

// Fill sets the value of the input matching sel, as typing would,
// replacing what was there.
func (p *Page) Fill(sel, value string) {
	p.t.Helper()
	p.do("filling "+sel, chromedp.SetValue(chromedp.CSS(sel), value))
}

// Submit submits the form of the element matching sel (or the form
// itself) and waits for the page it loads.
func (p *Page) Submit(sel string) int {
	p.t.Helper()
	return p.navigate("submitting "+sel, chromedp.Submit(chromedp.CSS(sel)))
}

// FillAndSubmit sets the named fields of the form matching sel and
// submits it, in one step of the page's script: a live page may replace
// the form between two steps (its main part is swapped on each status
// move), so it is found once, filled and submitted at once.
func (p *Page) FillAndSubmit(sel string, fields map[string]string) int {
	p.t.Helper()
	values, err := json.Marshal(fields)
	if err != nil {
		p.t.Fatal(err)
	}
	js := fmt.Sprintf(`(() => { const f = document.querySelector(%q); `+
		`for (const [k, v] of Object.entries(%s)) { f.elements[k].value = v; } f.requestSubmit(); })()`, sel, values)
	return p.navigate("filling and submitting "+sel, chromedp.Evaluate[chromedp.Void](js))
}

// navigate runs an action that loads a page and returns its HTTP status.
func (p *Page) navigate(what string, a chromedp.Action[chromedp.Void]) int {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, a)
	if err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
	return int(resp.Status)
}

// Click clicks the element matching sel.
func (p *Page) Click(sel string) {
	p.t.Helper()
	p.do("clicking "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// Eventually polls the JavaScript expression, every 50ms, until it is
// true; it fails the test, naming what, when it is not within timeout.
// It returns how long it took.
func (p *Page) Eventually(timeout time.Duration, what, expr string) time.Duration {
	p.t.Helper()
	start := time.Now()
	for !Eval[bool](p, "!!("+expr+")") {
		if time.Since(start) > timeout {
			p.t.Fatalf("%s (%s): not within %s", what, expr, timeout)
		}
		select {
		case <-p.ctx.Done():
			p.t.Fatalf("%s: the page closed first", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return time.Since(start)
}

// Screenshot saves a PNG of the whole page as name.png in the artifacts
// folder, logs and returns its path.
func (p *Page) Screenshot(name string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(p.b.artifacts, safeName(p.t.Name()+"-"+name)+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	p.t.Logf("screenshot: %s", path)
	return path
}

// Console is what the page wrote to its console so far.
func (p *Page) Console() []chromedp.ConsoleMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]chromedp.ConsoleMessage(nil), p.console...)
}

// ClearConsole forgets the messages so far (those of earlier loads).
func (p *Page) ClearConsole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.console = nil
}

// Errors are the console's errors and uncaught exceptions so far (but
// for a missing /favicon.ico, which the browser fetches unasked).
func (p *Page) Errors() []chromedp.ConsoleMessage {
	var out []chromedp.ConsoleMessage
	for _, m := range p.Console() {
		if strings.HasSuffix(m.URL, "/favicon.ico") {
			continue // the browser asks for it on its own, not the page
		}
		if m.Type == chromedp.ConsoleError || m.IsException() {
			out = append(out, m)
		}
	}
	return out
}

// NoErrors fails the test when the page wrote an error or threw an
// uncaught exception.
func (p *Page) NoErrors() {
	p.t.Helper()
	if errs := p.Errors(); len(errs) > 0 {
		p.t.Fatalf("the page wrote %d error(s) to its console, the first: %s at %s:%d", len(errs), errs[0], errs[0].URL, errs[0].Line)
	}
}

// Injected fails the test when one of the globals is set: markers an
// injected script or attribute (onerror=window.__pwned=1) would set.
func (p *Page) Injected(globals ...string) {
	p.t.Helper()
	for _, g := range globals {
		if v := Eval[string](p, fmt.Sprintf("typeof window[%s]", jsString(g))); v != "undefined" {
			p.t.Fatalf("window.%s is set (%s): text of the page ran as script", g, v)
		}
	}
}

// Eval evaluates the JavaScript expression on the page and decodes its
// value (JSON) into T.
func Eval[T any](p *Page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil && !errors.Is(err, chromedp.ErrJSNull) && !errors.Is(err, chromedp.ErrJSUndefined) {
		p.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// do runs an action with the page's timeout.
func (p *Page) do(what string, a chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, a); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`, "\u2028", `\u2028`, "\u2029", `\u2029`, "<", `\x3c`)
	return "'" + r.Replace(s) + "'"
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeName makes a file name of a test's name.
func safeName(s string) string { return unsafe.ReplaceAllString(s, "_") }

// setHeader is the action that sends the header with every request of
// the tab.
func setHeader(name, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{name: value}})
		return err
	})
}

// FirstContentfulPaint is the page's first-contentful-paint (Performance
// API), from the start of its navigation; it waits for the entry.
func (p *Page) FirstContentfulPaint() time.Duration {
	p.t.Helper()
	const entry = "performance.getEntriesByName('first-contentful-paint')[0]"
	p.Eventually(p.timeout, "the first contentful paint", entry)
	ms := Eval[float64](p, entry+".startTime")
	return time.Duration(ms * float64(time.Millisecond))
}
