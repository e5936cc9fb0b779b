package access

import (
	"github.com/regatta-dev/regatta/internal/testenv"

	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// get sends a request to the Gate's server with the token (if any) as a
// bearer token, Accept as given.
func get(t *testing.T, client *http.Client, u, token, accept string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestKubernetesTokens: tokens of the real management cluster are
// reviewed (TokenReview) and authorised (SubjectAccessReview on
// fleets.regatta.dev and tenants.regatta.dev) with only the rights the
// chart gives regatta: the fleet viewer sees the fleet, tenant a's viewer
// tenant a only, a bad token gets 401 and a good token allowed nothing
// 403 naming the RBAC to grant.
func TestKubernetesTokens(t *testing.T) {
	const ns = "ui-kube-tokens"
	viewerRoles(t, "a", "b", "c")
	client, _ := reviewer(t, ns)
	g, err := New(Options{Mode: ModeKubernetes, Kube: client, Tenants: func() []string { return []string{"a", "b", "c"} }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Wrap(echo))
	defer srv.Close()
	fleet := serviceAccount(t, ns, "fleet-viewer", "regatta-ui-fleet-viewer")
	tenantA := serviceAccount(t, ns, "tenant-a", "regatta-ui-tenant-viewer-a")
	nobody := serviceAccount(t, ns, "nobody")
	tenantsAC := serviceAccount(t, ns, "tenants-a-c", "regatta-ui-tenant-viewer-c", "regatta-ui-tenant-viewer-a")

	resp := get(t, noRedirect, srv.URL+"/", fleet, "application/json")
	if v := decodeViewer(t, resp); resp.StatusCode != 200 || !v.Fleet || v.Name != "system:serviceaccount:"+ns+":fleet-viewer" {
		t.Errorf("fleet viewer: %d %+v", resp.StatusCode, v)
	}
	resp = get(t, noRedirect, srv.URL+"/clusters/x", tenantA, "application/json")
	if v := decodeViewer(t, resp); resp.StatusCode != 200 || v.Fleet || !slices.Equal(v.Tenants, []string{"a"}) {
		t.Errorf("tenant a viewer: %d %+v, want tenant a only", resp.StatusCode, v)
	}
	resp = get(t, noRedirect, srv.URL+"/", tenantsAC, "application/json")
	if v := decodeViewer(t, resp); resp.StatusCode != 200 || v.Fleet || !slices.Equal(v.Tenants, []string{"a", "c"}) {
		t.Errorf("tenants a and c viewer: %d %+v, want tenants a and c in the UI's order", resp.StatusCode, v)
	}
	resp = get(t, noRedirect, srv.URL+"/", "not-a-token", "application/json")
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("bad token: %d %v, want 401 with WWW-Authenticate", resp.StatusCode, resp.Header)
	}
	resp = get(t, noRedirect, srv.URL+"/", nobody, "text/html")
	b := body(t, resp)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(b, "system:serviceaccount:"+ns+":nobody") ||
		!strings.Contains(b, `resources: ["fleets"]`) || !strings.Contains(b, `resourceNames: ["fleet"]`) {
		t.Errorf("token allowed nothing: %d, want 403 naming the user and the rule:\n%s", resp.StatusCode, b)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("403 page headers %v, want no framing and no caching", resp.Header)
	}
}

// TestUnauthenticatedPagesGoToLogin: a browser without a token is sent
// to the login form (and back afterwards); the live stream and API
// clients get 401; health and static files pass with the zero Viewer.
func TestUnauthenticatedPagesGoToLogin(t *testing.T) {
	client, _ := reviewer(t, "ui-kube-login")
	g, err := New(Options{Mode: ModeKubernetes, Kube: client})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Wrap(echo))
	defer srv.Close()
	resp := get(t, noRedirect, srv.URL+"/clusters/prod-1?at=2026-01-01T00:00:00Z", "", "text/html,application/xhtml+xml")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || loc != "/-/login?next="+url.QueryEscape("/clusters/prod-1?at=2026-01-01T00:00:00Z") {
		t.Errorf("page without a token: %d to %q, want 302 to the login", resp.StatusCode, loc)
	}
	for _, p := range []string{"/-/stream", "/"} {
		accept := "application/json"
		if p == "/-/stream" {
			accept = "text/event-stream, text/html"
		}
		if resp := get(t, noRedirect, srv.URL+p, "", accept); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d, want 401", p, resp.StatusCode)
		}
	}
	for _, p := range []string{"/-/healthz", "/-/static/ui.css"} {
		if resp := get(t, noRedirect, srv.URL+p, "", "text/html"); resp.StatusCode != 200 || decodeViewer(t, resp).Fleet {
			t.Errorf("%s: %d, want 200 with the zero Viewer", p, resp.StatusCode)
		}
	}
	resp = get(t, noRedirect, srv.URL+"/-/login?next=/profiles/p", "", "text/html")
	if b := body(t, resp); resp.StatusCode != 200 || !strings.Contains(b, `<form id="login" method="post"`) || !strings.Contains(b, `value="/profiles/p"`) {
		t.Errorf("login form: %d\n%s", resp.StatusCode, b)
	}
}

// TestLoginFormSetsTokenCookie: the login form's token, once the API
// server accepts it, is kept in an HttpOnly cookie that later
// navigations carry; a token it refuses is answered 401 with the form.
func TestLoginFormSetsTokenCookie(t *testing.T) {
	const ns = "ui-kube-form"
	viewerRoles(t, "a")
	client, _ := reviewer(t, ns)
	g, err := New(Options{Mode: ModeKubernetes, Kube: client, Tenants: func() []string { return []string{"a"} }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Wrap(echo))
	defer srv.Close()
	tenantA := serviceAccount(t, ns, "tenant-a", "regatta-ui-tenant-viewer-a")
	post := func(token string) *http.Response {
		resp, err := noRedirect.PostForm(srv.URL+"/-/login", url.Values{"token": {token}, "next": {"/clusters/c1"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := post("not-a-token"); resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) > 0 {
		t.Errorf("bad token at the form: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	resp := post(tenantA)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/clusters/c1" {
		t.Fatalf("good token at the form: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == TokenCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode {
		t.Fatalf("token cookie %+v, want HttpOnly and SameSite=Lax", cookie)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/clusters/c1", nil)
	req.AddCookie(cookie)
	resp2, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if v := decodeViewer(t, resp2); resp2.StatusCode != 200 || !slices.Equal(v.Tenants, []string{"a"}) {
		t.Errorf("with the cookie: %d %+v", resp2.StatusCode, v)
	}
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/-/login", strings.NewReader("token="+tenantA))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example.com")
	if resp, err := noRedirect.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("the form posted from another site: %v %v, want 403", resp.StatusCode, err)
	}
}

// TestReviewsAreCached: a token's second request within the TTL makes
// no review (counted on the real client's wire); after the TTL it is
// reviewed again; the cache stays within its size.
func TestReviewsAreCached(t *testing.T) {
	const ns = "ui-kube-cache"
	viewerRoles(t, "a")
	client, count := reviewer(t, ns)
	g, err := New(Options{Mode: ModeKubernetes, Kube: client, CacheSize: 2, Tenants: func() []string { return []string{"a"} }})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	g.cache.now = func() time.Time { return now }
	srv := httptest.NewServer(g.Wrap(echo))
	defer srv.Close()
	tenantA := serviceAccount(t, ns, "tenant-a", "regatta-ui-tenant-viewer-a")
	get(t, noRedirect, srv.URL+"/", tenantA, "application/json")
	tr, sar := count.count(tokenReviews), count.count(accessReview)
	if tr != 1 || sar != 2 {
		t.Fatalf("first request: %d TokenReviews, %d SubjectAccessReviews, want 1 and 2 (fleet, tenant a)", tr, sar)
	}
	for range 3 {
		if v := decodeViewer(t, get(t, noRedirect, srv.URL+"/-/stream", tenantA, "text/event-stream")); !slices.Equal(v.Tenants, []string{"a"}) {
			t.Fatalf("cached: %+v", v)
		}
	}
	if count.count(tokenReviews) != tr || count.count(accessReview) != sar {
		t.Errorf("requests within the TTL reviewed again: %d TokenReviews, %d SubjectAccessReviews", count.count(tokenReviews), count.count(accessReview))
	}
	now = now.Add(DefaultCacheTTL + time.Second)
	get(t, noRedirect, srv.URL+"/", tenantA, "application/json")
	if count.count(tokenReviews) != tr+1 {
		t.Errorf("after the TTL: %d TokenReviews, want %d", count.count(tokenReviews), tr+1)
	}
	for _, tok := range []string{"bad-1", "bad-2", "bad-3"} {
		get(t, noRedirect, srv.URL+"/", tok, "application/json")
	}
	if n := g.cache.len(); n > 2 {
		t.Errorf("the cache holds %d answers, more than its size 2", n)
	}
}

// TestReviewFailureIs503AndLogsNoToken: when the management cluster
// cannot be asked, the reader gets 503 (not 401: their token may be
// good), nothing is cached, and the log names the failure, never the
// token; denials are logged with the user only.
func TestReviewFailureIs503AndLogsNoToken(t *testing.T) {
	var logs testenv.LogBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	cfg := rest.CopyConfig(env.Cluster("mgmt").RESTConfig())
	cfg.Host = "https://127.0.0.1:1" // nothing listens there
	down, err := New(Options{Mode: ModeKubernetes, Kube: kubernetes.NewForConfigOrDie(cfg), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(down.Wrap(echo))
	defer srv.Close()
	const secret = "s3cr3t-token-value"
	if resp := get(t, noRedirect, srv.URL+"/", secret, "application/json"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("management cluster down: %d, want 503", resp.StatusCode)
	}
	if down.cache.len() != 0 {
		t.Error("a failed review was cached")
	}
	client, _ := reviewer(t, "ui-kube-logs")
	up, err := New(Options{Mode: ModeKubernetes, Kube: client, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(up.Wrap(echo))
	defer srv2.Close()
	nobody := serviceAccount(t, "ui-kube-logs", "nobody")
	get(t, noRedirect, srv2.URL+"/", nobody, "application/json")
	get(t, noRedirect, srv2.URL+"/", secret, "application/json")
	out := logs.String()
	if !strings.Contains(out, "access review failed") || !strings.Contains(out, "system:serviceaccount:ui-kube-logs:nobody") {
		t.Errorf("the log lacks the failure or the denied user:\n%s", out)
	}
	if strings.Contains(out, secret) || strings.Contains(out, nobody) {
		t.Errorf("a token in the log:\n%s", out)
	}
}
