package access

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

// Modes of a Gate.
const (
	// ModeNone lets every reader see the whole fleet, unauthenticated:
	// allowed only on a loopback listen address.
	ModeNone = "none"
	// ModeKubernetes reviews the reader's bearer token (TokenReview) and
	// authorises its user and groups (SubjectAccessReview) against the
	// management cluster.
	ModeKubernetes = "kubernetes"
	// ModeOIDC logs the reader in through an OpenID Connect provider
	// (authorization code flow) and keeps the user and groups in a signed
	// session cookie.
	ModeOIDC = "oidc"
)

// Paths the Gate serves itself, under the UI's reserved /-/ prefix.
const (
	LoginPath    = "/-/login"
	CallbackPath = "/-/callback"
	LogoutPath   = "/-/logout"
	streamPath   = "/-/stream"
)

// Virtual resources of the group regatta.dev that SubjectAccessReviews
// ask about: get on fleets/<fleet name> sees the whole fleet, get on
// tenants/<tenant> sees that tenant's part.
const (
	Group            = "regatta.dev"
	ResourceFleets   = "fleets"
	ResourceTenants  = "tenants"
	DefaultFleetName = "fleet"
)

// Defaults of Options.
const (
	DefaultCacheTTL  = 30 * time.Second
	DefaultCacheSize = 1024
)

// Options configures a Gate.
type Options struct {
	// Mode is ModeNone (the default when empty), ModeKubernetes or ModeOIDC.
	Mode string
	// ListenAddr is the UI's listen address (host:port); ModeNone
	// refuses any but a loopback one.
	ListenAddr string
	// FleetName is the name of the fleets resource whose get right shows
	// the whole fleet. Default: DefaultFleetName.
	FleetName string
	// Tenants returns the tenants the UI knows (status.Tenants of the
	// newest snapshot): each is asked about with a SubjectAccessReview
	// when the reader may not see the whole fleet.
	Tenants func() []string
	// Kube is the management cluster: TokenReviews in ModeKubernetes,
	// SubjectAccessReviews in both authenticated modes. Required in
	// ModeKubernetes; in ModeOIDC, nil authorises by OIDC.FleetGroups and
	// OIDC.TenantGroups instead (Flags.Options leaves it nil when those
	// are given).
	Kube kubernetes.Interface
	// CacheTTL is how long a review's answer is kept (per token, or per
	// user and groups). Default: DefaultCacheTTL.
	CacheTTL time.Duration
	// CacheSize bounds the answers kept. Default: DefaultCacheSize.
	CacheSize int
	// OIDC configures ModeOIDC.
	OIDC OIDCOptions
	// CookieKey signs the OIDC session cookies (at least 32 bytes); nil
	// generates one at New, so that a restart logs everyone out.
	CookieKey []byte
	// Log receives denials and review failures (never a token).
	Log *slog.Logger
}

// OIDCOptions configures ModeOIDC.
type OIDCOptions struct {
	// Issuer is the provider's URL; its discovery document is read at
	// the first login.
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is the UI's callback as the provider knows it:
	// https://<ui host>/-/callback.
	RedirectURL string
	// Scopes asked for besides openid. Default: profile, email.
	Scopes []string
	// UserClaim names the reader (default "email"); GroupsClaim holds
	// their groups (default "groups").
	UserClaim   string
	GroupsClaim string
	// FleetGroups see the whole fleet; TenantGroups maps a tenant to the
	// groups that see it. Used when Kube is nil.
	FleetGroups  []string
	TenantGroups map[string][]string
	// HTTPClient reaches the provider. Default: http.DefaultClient.
	HTTPClient *http.Client
}

// Gate puts the reader's Viewer in each request's context, or answers
// for them (401, 403, a login).
type Gate struct {
	mode   string
	log    *slog.Logger
	kube   *kubeAuth
	oidc   *oidcAuth
	grants grants
	cache  *cache
}

// New checks opts and returns their Gate.
func New(opts Options) (*Gate, error) {
	opts = opts.withDefaults()
	g := &Gate{mode: opts.Mode, log: opts.Log}
	switch opts.Mode {
	case ModeNone:
		return g, checkLoopback(opts.ListenAddr)
	case ModeKubernetes:
		return g, g.setupKubernetes(opts)
	case ModeOIDC:
		return g, g.setupOIDC(opts)
	}
	return nil, fmt.Errorf("--ui-auth %q: want %s, %s or %s", opts.Mode, ModeNone, ModeKubernetes, ModeOIDC)
}

func (o Options) withDefaults() Options {
	if o.Mode == "" {
		o.Mode = ModeNone
	}
	if o.FleetName == "" {
		o.FleetName = DefaultFleetName
	}
	if o.Tenants == nil {
		o.Tenants = func() []string { return nil }
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = DefaultCacheTTL
	}
	if o.CacheSize <= 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

func (g *Gate) setupKubernetes(opts Options) error {
	if opts.Kube == nil {
		return errors.New("--ui-auth kubernetes needs the management cluster (--management-kubeconfig) for its TokenReviews and SubjectAccessReviews")
	}
	g.kube = &kubeAuth{client: opts.Kube}
	g.grants = newReviewGrants(opts)
	g.cache = newCache(opts.CacheSize, opts.CacheTTL)
	return nil
}

// checkLoopback refuses ModeNone on an address others can reach.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("the UI's listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("the UI's listen address %q is not loopback, and --ui-auth none (the default) shows the whole fleet to anyone who reaches it: "+
		"listen on 127.0.0.1, or set --ui-auth kubernetes or --ui-auth oidc", addr)
}

// Wrap serves the Gate's own pages (login, callback, logout) and passes
// every other request to next with its reader's Viewer in the context,
// or answers 401, 403 or a redirect to the login.
func (g *Gate) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.mode == ModeNone {
			next.ServeHTTP(w, r.WithContext(WithViewer(r.Context(), Viewer{Fleet: true})))
			return
		}
		switch {
		case r.URL.Path == LoginPath:
			g.login(w, r)
		case r.URL.Path == CallbackPath && g.oidc != nil:
			g.oidc.callback(w, r)
		case r.URL.Path == LogoutPath:
			g.logout(w, r)
		case public(r.URL.Path):
			next.ServeHTTP(w, r) // the zero Viewer: sees nothing
		default:
			g.serve(w, r, next)
		}
	})
}

// public paths carry no fleet data: health and static files (the login
// page's style).
func public(p string) bool {
	return p == "/-/healthz" || strings.HasPrefix(p, "/-/static/")
}

// serve admits the request's reader or answers for them.
func (g *Gate) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	d, err := g.decide(r)
	switch {
	case errors.Is(err, errNoCredentials), errors.Is(err, errBadCredentials):
		g.unauthenticated(w, r, err)
	case err != nil:
		g.log.Error("ui: access review failed", "error", err)
		http.Error(w, "cannot decide who you are: the access review failed (see regatta's log)", http.StatusServiceUnavailable)
	case !d.viewer.Fleet && len(d.viewer.Tenants) == 0:
		g.log.Info("ui: reader allowed nothing", "user", d.user)
		g.forbidden(w, d)
	default:
		next.ServeHTTP(w, r.WithContext(WithViewer(r.Context(), d.viewer)))
	}
}

// decision is what a reader may see.
type decision struct {
	user   string
	groups []string
	viewer Viewer
}

var (
	errNoCredentials  = errors.New("no credentials")
	errBadCredentials = errors.New("credentials refused")
)

// decide authenticates and authorises the request's reader.
func (g *Gate) decide(r *http.Request) (decision, error) {
	if g.kube != nil {
		return g.decideToken(r)
	}
	return g.oidc.decide(r, g)
}

// unauthenticated sends a page reader to the login and answers 401 to
// the live stream and to non-HTML clients.
func (g *Gate) unauthenticated(w http.ResponseWriter, r *http.Request, err error) {
	if wantsPage(r) {
		http.Redirect(w, r, LoginPath+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
		return
	}
	if g.kube != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="regatta"`)
	}
	msg := "authentication required: send Authorization: Bearer <token>, or log in at " + LoginPath
	if errors.Is(err, errBadCredentials) {
		msg = "authentication refused: the token or session is not valid (any more); log in at " + LoginPath
	}
	http.Error(w, msg, http.StatusUnauthorized)
}

// wantsPage: a browser navigating to a page (not the live stream).
func wantsPage(r *http.Request) bool {
	if r.URL.Path == streamPath || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// secure reports whether the reader reached the UI over TLS (directly or
// through a proxy that says so): its cookies are then Secure.
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}
