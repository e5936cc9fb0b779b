package access

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Cookies of ModeOIDC: the session (user, groups, expiry; signed, no
// server-side store) and the login in progress (state, nonce, PKCE
// verifier, return address; signed, ten minutes).
const (
	SessionCookie = "regatta_session"
	loginCookie   = "regatta_login"
	loginTTL      = 10 * time.Minute
	// maxCookie is what browsers keep of one cookie.
	maxCookie = 4000
)

// Purposes of the signed cookies.
const (
	purposeSession = "session"
	purposeLogin   = "login"
)

// session is the session cookie's payload.
type session struct {
	User   string   `json:"u"`
	Groups []string `json:"g,omitempty"`
	Exp    int64    `json:"e"`
}

func (s *session) expiry() int64 { return s.Exp }

// loginState is the login cookie's payload.
type loginState struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Next     string `json:"r"`
	Exp      int64  `json:"e"`
}

func (l *loginState) expiry() int64 { return l.Exp }

// oidcAuth logs readers in with the authorization code flow.
type oidcAuth struct {
	opts   OIDCOptions
	signer *signer
	log    *slog.Logger
	secure bool // the redirect URL is https: cookies are Secure

	mu       sync.Mutex
	provider *oidc.Provider // discovered at the first login
}

func (g *Gate) setupOIDC(opts Options) error {
	o := opts.OIDC
	if err := checkOIDC(o); err != nil {
		return err
	}
	if o.UserClaim == "" {
		o.UserClaim = "email"
	}
	if o.GroupsClaim == "" {
		o.GroupsClaim = "groups"
	}
	if o.Scopes == nil {
		o.Scopes = []string{"profile", "email"}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	s, err := newSigner(opts.CookieKey)
	if err != nil {
		return err
	}
	g.oidc = &oidcAuth{opts: o, signer: s, log: opts.Log, secure: strings.HasPrefix(o.RedirectURL, "https://")}
	if opts.Kube != nil {
		g.grants = newReviewGrants(opts)
		g.cache = newCache(opts.CacheSize, opts.CacheTTL)
		return nil
	}
	if len(o.FleetGroups) == 0 && len(o.TenantGroups) == 0 {
		return errors.New("--ui-auth oidc without a management cluster needs --ui-oidc-fleet-groups or --ui-oidc-tenant-groups: no reader could see anything")
	}
	g.grants = &groupGrants{fleet: o.FleetGroups, tenants: o.TenantGroups}
	return nil
}

// checkOIDC names the flag a required setting lacks.
func checkOIDC(o OIDCOptions) error {
	var missing []string
	for flag, v := range map[string]string{"--ui-oidc-issuer": o.Issuer, "--ui-oidc-client-id": o.ClientID, "--ui-oidc-redirect-url": o.RedirectURL} {
		if v == "" {
			missing = append(missing, flag)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("--ui-auth oidc needs %s", strings.Join(missing, ", "))
	}
	u, err := url.Parse(o.RedirectURL)
	if err != nil || u.Host == "" || u.Path != CallbackPath {
		return fmt.Errorf("--ui-oidc-redirect-url %q: want the UI's callback, https://<UI host>%s", o.RedirectURL, CallbackPath)
	}
	return nil
}

// ctx carries the provider's HTTP client for go-oidc and oauth2.
func (o *oidcAuth) ctx(ctx context.Context) context.Context {
	ctx = oidc.ClientContext(ctx, o.opts.HTTPClient)
	return context.WithValue(ctx, oauth2.HTTPClient, o.opts.HTTPClient)
}

// discover reads the provider's discovery document once it answers.
func (o *oidcAuth) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	p, err := oidc.NewProvider(o.ctx(ctx), o.opts.Issuer)
	if err != nil {
		return nil, fmt.Errorf("OpenID provider %s (--ui-oidc-issuer): %w", o.opts.Issuer, err)
	}
	o.provider = p
	return p, nil
}

func (o *oidcAuth) config(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{
		ClientID: o.opts.ClientID, ClientSecret: o.opts.ClientSecret, RedirectURL: o.opts.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: append([]string{oidc.ScopeOpenID}, o.opts.Scopes...),
	}
}

// login sends the reader to the provider, keeping state, nonce and the
// PKCE verifier in the signed login cookie.
func (o *oidcAuth) login(w http.ResponseWriter, r *http.Request, next string) {
	p, err := o.discover(r.Context())
	if err != nil {
		o.log.Error("ui: OIDC login", "error", err)
		http.Error(w, "cannot reach the OpenID provider now (see regatta's log)", http.StatusBadGateway)
		return
	}
	st := loginState{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(), Next: next,
		Exp: o.signer.now().Add(loginTTL).Unix()}
	v, err := o.signer.sign(purposeLogin, &st)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	o.setCookie(w, r, loginCookie, v, loginTTL)
	to := o.config(p).AuthCodeURL(st.State, oidc.Nonce(st.Nonce), oauth2.S256ChallengeOption(st.Verifier))
	http.Redirect(w, r, to, http.StatusFound)
}

// callback takes the provider's answer: it checks the state, exchanges
// the code, verifies the ID token and its nonce, and sets the session.
func (o *oidcAuth) callback(w http.ResponseWriter, r *http.Request) {
	st, err := o.loginState(r)
	if err != nil {
		http.Error(w, err.Error()+": start again at "+LoginPath, http.StatusBadRequest)
		return
	}
	o.setCookie(w, r, loginCookie, "", -1)
	if e := r.FormValue("error"); e != "" {
		http.Error(w, "the OpenID provider refused the login: "+e+" "+r.FormValue("error_description"), http.StatusUnauthorized)
		return
	}
	s, err := o.exchange(r.Context(), r.FormValue("code"), st)
	if err != nil {
		o.log.Info("ui: OIDC login refused", "error", err)
		http.Error(w, "login refused: "+err.Error(), http.StatusUnauthorized)
		return
	}
	v, err := o.signer.sign(purposeSession, s)
	if err == nil && len(v) > maxCookie {
		err = fmt.Errorf("the session of %s (%d groups) needs %d bytes, more than a cookie holds: narrow the %s claim", s.User, len(s.Groups), len(v), o.opts.GroupsClaim)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	o.setCookie(w, r, SessionCookie, v, time.Until(time.Unix(s.Exp, 0)))
	http.Redirect(w, r, st.Next, http.StatusSeeOther)
}

// loginState reads the login cookie and checks the returned state.
func (o *oidcAuth) loginState(r *http.Request) (*loginState, error) {
	c, err := r.Cookie(loginCookie)
	if err != nil {
		return nil, errors.New("no login in progress in this browser")
	}
	var st loginState
	if err := o.signer.open(purposeLogin, c.Value, &st); err != nil {
		return nil, errors.New("the login in progress is not valid (any more)")
	}
	if r.FormValue("state") != st.State {
		return nil, errors.New("the provider's state does not match this browser's login")
	}
	return &st, nil
}

// exchange trades the code for tokens and reads the verified ID token's
// user and groups.
func (o *oidcAuth) exchange(ctx context.Context, code string, st *loginState) (*session, error) {
	p, err := o.discover(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := o.config(p).Exchange(o.ctx(ctx), code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		return nil, fmt.Errorf("code exchange: %w", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok {
		return nil, errors.New("the provider's token response has no id_token")
	}
	idt, err := p.VerifierContext(o.ctx(ctx), &oidc.Config{ClientID: o.opts.ClientID, Now: o.signer.now}).Verify(o.ctx(ctx), raw)
	if err != nil {
		return nil, fmt.Errorf("ID token: %w", err)
	}
	if idt.Nonce != st.Nonce {
		return nil, errors.New("ID token: the nonce does not match this login")
	}
	return o.session(idt)
}

// session reads the user and groups claims.
func (o *oidcAuth) session(idt *oidc.IDToken) (*session, error) {
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return nil, fmt.Errorf("ID token claims: %w", err)
	}
	user, _ := claims[o.opts.UserClaim].(string)
	if user == "" {
		return nil, fmt.Errorf("ID token: no %q claim (--ui-oidc-user-claim) naming the user", o.opts.UserClaim)
	}
	s := &session{User: user, Exp: idt.Expiry.Unix()}
	switch g := claims[o.opts.GroupsClaim].(type) {
	case string:
		s.Groups = []string{g}
	case []any:
		for _, x := range g {
			if name, ok := x.(string); ok {
				s.Groups = append(s.Groups, name)
			}
		}
	}
	return s, nil
}

// decide reads the session cookie and authorises its user and groups.
func (o *oidcAuth) decide(r *http.Request, g *Gate) (decision, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return decision{}, errNoCredentials
	}
	var s session
	if err := o.signer.open(purposeSession, c.Value, &s); err != nil {
		return decision{}, errBadCredentials
	}
	if g.cache == nil {
		return g.grant(r.Context(), s.User, s.Groups)
	}
	key := sha256.Sum256([]byte("user\x00" + s.User + "\x00" + strings.Join(s.Groups, "\x00")))
	return g.cache.get(key, func() (decision, error) { return g.grant(r.Context(), s.User, s.Groups) })
}

func (o *oidcAuth) setCookie(w http.ResponseWriter, r *http.Request, name, value string, ttl time.Duration) {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true,
		Secure: o.secure || secure(r), SameSite: http.SameSiteLaxMode}
	if ttl < 0 {
		c.MaxAge = -1
	} else {
		c.Expires = o.signer.now().Add(ttl)
	}
	http.SetCookie(w, c)
}

// random is 128 bits, URL-safe.
func random() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
