package access

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
)

// oidcUI serves the Gate of an OIDC login with the provider p, on
// loopback; edit adjusts its options.
func oidcUI(t *testing.T, p *provider, edit func(*Options)) (*httptest.Server, *Gate) {
	t.Helper()
	return startOIDCUI(t, p, false, edit)
}

// startOIDCUI is oidcUI, over TLS when tlsUI.
func startOIDCUI(t *testing.T, p *provider, tlsUI bool, edit func(*Options)) (*httptest.Server, *Gate) {
	t.Helper()
	var h http.Handler
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	if tlsUI {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	opts := Options{Mode: ModeOIDC, OIDC: OIDCOptions{
		Issuer: p.srv.URL, ClientID: p.clientID, ClientSecret: p.secret, RedirectURL: srv.URL + CallbackPath,
		FleetGroups: []string{"ops"}, TenantGroups: map[string][]string{"a": {"team-a"}, "b": {"team-b"}},
	}}
	if edit != nil {
		edit(&opts)
	}
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h = g.Wrap(echo)
	return srv, g
}

// browser is a client with a cookie jar that follows redirects and keeps
// the cookies each response set (the jar hides their attributes).
type browser struct {
	*http.Client
	set []*http.Cookie
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{}
	b.Client = &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		b.set = append(b.set, req.Response.Cookies()...)
		if len(via) > 10 {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	return b
}

// open navigates to u as a browser does (Accept text/html).
func (b *browser) open(t *testing.T, u string) *http.Response {
	t.Helper()
	return get(t, b.Client, u, "", "text/html,application/xhtml+xml")
}

func (b *browser) cookie(t *testing.T, srv *httptest.Server, name string) *http.Cookie {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	for _, c := range b.Jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestOIDCLogin drives the real go-oidc client through the whole
// authorization code flow: a page sends the browser to the login, the
// provider, the callback and back to the page, now with a Viewer of the
// ID token's user and groups; the session cookie is signed, HttpOnly and
// SameSite=Lax, and later requests need no login.
func TestOIDCLogin(t *testing.T) {
	p := newProvider(t)
	srv, _ := oidcUI(t, p, nil)
	for _, tc := range []struct {
		user   string
		groups []string
		want   Viewer
	}{
		{"alice@example.com", []string{"staff", "ops"}, Viewer{Name: "alice@example.com", Fleet: true}},
		{"bob@example.com", []string{"team-a"}, Viewer{Name: "bob@example.com", Tenants: []string{"a"}}},
	} {
		p.as(tc.user, tc.groups...)
		b := newBrowser(t)
		resp := b.open(t, srv.URL+"/clusters/prod-1?at=2026-01-01T00:00:00Z")
		if v := decodeViewer(t, resp); resp.StatusCode != 200 || v.Name != tc.want.Name || v.Fleet != tc.want.Fleet || !slices.Equal(v.Tenants, tc.want.Tenants) {
			t.Errorf("%s: %d %+v, want %+v", tc.user, resp.StatusCode, v, tc.want)
		}
		if got := resp.Request.URL.RequestURI(); got != "/clusters/prod-1?at=2026-01-01T00:00:00Z" {
			t.Errorf("%s: landed on %s, want the page asked for", tc.user, got)
		}
		var session *http.Cookie
		for _, c := range b.set {
			if c.Name == SessionCookie && c.Value != "" {
				session = c
			}
		}
		if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Expires.Before(time.Now().Add(50*time.Minute)) {
			t.Errorf("%s: session cookie %+v, want HttpOnly, SameSite=Lax, expiring with the ID token", tc.user, session)
		}
		b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		if resp := b.open(t, srv.URL+"/-/stream"); resp.StatusCode != 200 || decodeViewer(t, resp).Name != tc.user {
			t.Errorf("%s: the live stream with the session: %d", tc.user, resp.StatusCode)
		}
	}
	p.as("mallory@example.com", "guests")
	resp := newBrowser(t).open(t, srv.URL+"/")
	if b := body(t, resp); resp.StatusCode != http.StatusForbidden || !strings.Contains(b, "mallory@example.com") || !strings.Contains(b, "--ui-oidc-fleet-groups") {
		t.Errorf("a user of no mapped group: %d, want 403 naming the user and the flags:\n%s", resp.StatusCode, b)
	}
}

// TestOIDCSessionCookieIsChecked: a session cookie whose payload was
// changed, one signed with another key, the login cookie passed as a
// session, and an expired session are all refused.
func TestOIDCSessionCookieIsChecked(t *testing.T) {
	p := newProvider(t)
	srv, g := oidcUI(t, p, nil)
	p.as("bob@example.com", "team-a")
	b := newBrowser(t)
	if resp := b.open(t, srv.URL+"/"); resp.StatusCode != 200 {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	good := b.cookie(t, srv, SessionCookie)
	payload, mac, _ := strings.Cut(good.Value, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(payload)
	var s session
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	s.Groups = []string{"ops"} // the fleet's group
	raw, _ = json.Marshal(s)
	tampered := base64.RawURLEncoding.EncodeToString(raw) + "." + mac
	_, other := oidcUI(t, p, nil) // another key
	foreign, err := other.oidc.signer.sign(purposeSession, &s)
	if err != nil {
		t.Fatal(err)
	}
	asLogin, err := g.oidc.signer.sign(purposeLogin, &s)
	if err != nil {
		t.Fatal(err)
	}
	try := func(value string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/", nil)
		req.Header.Set("Accept", "application/json")
		req.AddCookie(&http.Cookie{Name: SessionCookie, Value: value})
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := try(good.Value); code != 200 {
		t.Fatalf("the untouched cookie: %d", code)
	}
	for name, v := range map[string]string{"tampered": tampered, "another key": foreign, "login cookie": asLogin, "garbage": "x.y"} {
		if code := try(v); code != http.StatusUnauthorized {
			t.Errorf("%s session cookie: %d, want 401", name, code)
		}
	}
	g.oidc.signer.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if code := try(good.Value); code != http.StatusUnauthorized {
		t.Errorf("expired session: %d, want 401", code)
	}
}

// TestOIDCRefusesBadLogins: an expired ID token, one with another nonce,
// and a callback without this browser's login in progress set no
// session.
func TestOIDCRefusesBadLogins(t *testing.T) {
	p := newProvider(t)
	srv, _ := oidcUI(t, p, nil)
	p.as("alice@example.com", "ops")
	for name, edit := range map[string]func(){
		"expired ID token": func() { p.lifetime = -time.Minute },
		"wrong nonce":      func() { p.lifetime, p.wrongNonce = time.Hour, true },
	} {
		p.mu.Lock()
		edit()
		p.mu.Unlock()
		b := newBrowser(t)
		resp := b.open(t, srv.URL+"/")
		if resp.StatusCode != http.StatusUnauthorized || resp.Request.URL.Path != CallbackPath || b.cookie(t, srv, SessionCookie) != nil {
			t.Errorf("%s: %d at %s, want 401 at the callback and no session", name, resp.StatusCode, resp.Request.URL.Path)
		}
	}
	resp := newBrowser(t).open(t, srv.URL+CallbackPath+"?code=abc&state=xyz")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("callback without a login in progress: %d, want 400", resp.StatusCode)
	}
}

// TestOIDCAuthorisedByRBAC: with a management cluster, the ID token's
// user and groups are authorised by SubjectAccessReviews: a group bound
// to tenant b's viewer role sees tenant b.
func TestOIDCAuthorisedByRBAC(t *testing.T) {
	viewerRoles(t, "b")
	client, _ := reviewer(t, "ui-oidc-rbac")
	bind(t, "regatta-ui-tenant-viewer-b", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "oidc-team-b"})
	p := newProvider(t)
	srv, _ := oidcUI(t, p, func(o *Options) {
		o.Kube, o.Tenants = client, func() []string { return []string{"a", "b"} }
		o.OIDC.FleetGroups, o.OIDC.TenantGroups = nil, nil
	})
	p.as("carol@example.com", "oidc-team-b")
	resp := newBrowser(t).open(t, srv.URL+"/")
	if v := decodeViewer(t, resp); resp.StatusCode != 200 || v.Fleet || !slices.Equal(v.Tenants, []string{"b"}) || v.Name != "carol@example.com" {
		t.Errorf("%d %+v, want carol seeing tenant b", resp.StatusCode, v)
	}
	p.as("dave@example.com", "oidc-nobody")
	resp = newBrowser(t).open(t, srv.URL+"/")
	if b := body(t, resp); resp.StatusCode != http.StatusForbidden || !strings.Contains(b, "kind: ClusterRoleBinding") {
		t.Errorf("%d, want 403 with the RBAC to grant:\n%s", resp.StatusCode, b)
	}
}

// TestOIDCCookiesSecureOverTLS: behind https the login and session
// cookies are Secure, so a browser never sends them in clear.
func TestOIDCCookiesSecureOverTLS(t *testing.T) {
	p := newProvider(t)
	srv, _ := startOIDCUI(t, p, true, nil)
	p.as("alice@example.com", "ops")
	b := newBrowser(t)
	b.Transport = srv.Client().Transport
	if resp := b.open(t, srv.URL+"/"); resp.StatusCode != 200 || !decodeViewer(t, resp).Fleet {
		t.Fatalf("login over TLS: %d", resp.StatusCode)
	}
	names := map[string]bool{}
	for _, c := range b.set {
		names[c.Name] = true
		if !c.Secure {
			t.Errorf("cookie %s over TLS is not Secure", c.Name)
		}
	}
	if !names[SessionCookie] || !names[loginCookie] {
		t.Errorf("cookies set %v, want the login and the session", names)
	}
}
