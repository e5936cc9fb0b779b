package access

import (
	"errors"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// pages are the Gate's own pages: the token login form, the logout note
// and the 403 page naming the RBAC to grant. html/template escapes the
// user and group names (a token may name anything).
var pages = template.Must(template.New("").Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/-/static/ui.css"><title>{{.}} · regatta</title></head><body><main id="main">{{end}}

{{define "login"}}{{template "head" "log in"}}
<h1>Log in to regatta</h1>
{{with .Error}}<p id="login-error" role="alert">{{.}}</p>{{end}}
<form id="login" method="post" action="/-/login">
<input type="hidden" name="next" value="{{.Next}}">
<label for="token">Kubernetes token of the management cluster</label>
<input id="token" name="token" type="password" autocomplete="off" required autofocus>
<button type="submit">Log in</button>
</form>
<p>For yourself: <code>kubectl create token &lt;service account&gt;</code>, or the token of your kubeconfig.
The token is kept in a cookie of this browser only.</p>
</main></body></html>{{end}}

{{define "loggedout"}}{{template "head" "logged out"}}
<h1>Logged out</h1><p><a href="/-/login">Log in again</a></p>
</main></body></html>{{end}}

{{define "forbidden"}}{{template "head" "access denied"}}
<h1>Access denied</h1>
<p id="denied-user">You are <strong>{{.User}}</strong>{{with .Groups}} (groups: {{range $i, $g := .}}{{if $i}}, {{end}}{{$g}}{{end}}){{end}},
and may read nothing of this fleet.</p>
{{if .Advice.RBAC}}
<p>To let you read the whole fleet, an administrator of the management cluster grants <code>get</code> on
the virtual resource <code>fleets.regatta.dev</code> named <code>{{.Advice.Fleet}}</code>; to let you read one tenant's
clusters and profiles, <code>get</code> on <code>tenants.regatta.dev</code> named after the tenant:</p>
<pre id="rbac">apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: regatta-ui-fleet-viewer
rules:
- apiGroups: ["regatta.dev"]
  resources: ["fleets"]
  resourceNames: ["{{.Advice.Fleet}}"]
  verbs: ["get"]
# or, for tenant TENANT only:
# - apiGroups: ["regatta.dev"]
#   resources: ["tenants"]
#   resourceNames: ["TENANT"]
#   verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: regatta-ui-fleet-viewer
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: regatta-ui-fleet-viewer
subjects:
- kind: User
  name: {{printf "%q" .User}}</pre>
{{else}}
<p>regatta maps OpenID Connect groups to what they see: an administrator adds one of your groups to
<code>--ui-oidc-fleet-groups</code> (the whole fleet) or to <code>--ui-oidc-tenant-groups TENANT=GROUP</code>
(one tenant).</p>
{{end}}
<p><a href="/-/logout">Log out</a></p>
</main></body></html>{{end}}
`))

// advice is what the 403 page tells to grant.
type advice struct {
	Fleet string // the fleets resource name
	RBAC  bool   // SubjectAccessReviews decide (else OIDC group flags)
}

// forbidden answers 403 to a reader allowed nothing, naming them and
// what to grant.
func (g *Gate) forbidden(w http.ResponseWriter, d decision) {
	pageHeaders(w)
	w.WriteHeader(http.StatusForbidden)
	_ = pages.ExecuteTemplate(w, "forbidden", map[string]any{
		"User": d.user, "Groups": d.groups, "Advice": g.grants.advice(),
	})
}

// login serves LoginPath: the token form in ModeKubernetes, the
// redirect to the provider in ModeOIDC.
func (g *Gate) login(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.FormValue("next"))
	if g.oidc != nil {
		g.oidc.login(w, r, next)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		loginForm(w, http.StatusOK, next, "")
	case http.MethodPost:
		g.loginToken(w, r, next)
	default:
		http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
	}
}

// loginToken reviews the form's token and, when the API server knows it,
// keeps it in the TokenCookie.
func (g *Gate) loginToken(w http.ResponseWriter, r *http.Request, next string) {
	if !sameOrigin(r) {
		http.Error(w, "the login form must be posted from this site", http.StatusForbidden)
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	if token == "" {
		loginForm(w, http.StatusUnauthorized, next, "Paste a token.")
		return
	}
	_, err := g.decideTokenValue(r.Context(), token)
	switch {
	case errors.Is(err, errBadCredentials):
		loginForm(w, http.StatusUnauthorized, next, "The management cluster does not accept this token.")
		return
	case err != nil:
		g.log.Error("ui: access review failed", "error", err)
		http.Error(w, "cannot review the token now (see regatta's log)", http.StatusServiceUnavailable)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: token, Path: "/", HttpOnly: true,
		Secure: secure(r), SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func loginForm(w http.ResponseWriter, code int, next, msg string) {
	pageHeaders(w)
	w.WriteHeader(code)
	_ = pages.ExecuteTemplate(w, "login", map[string]any{"Next": next, "Error": msg})
}

// logout forgets the reader's token or session.
func (g *Gate) logout(w http.ResponseWriter, r *http.Request) {
	for _, name := range []string{TokenCookie, SessionCookie, loginCookie} {
		http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
			Secure: secure(r), SameSite: http.SameSiteLaxMode})
	}
	pageHeaders(w)
	_ = pages.ExecuteTemplate(w, "loggedout", nil)
}

// safeNext keeps a return address on this site: a path, never a
// scheme-relative or absolute URL (browsers read a backslash as a slash
// and drop tabs and line breaks, so neither may appear), nor the login
// itself.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsFunc(next, unsafeInURL) ||
		strings.HasPrefix(next, LoginPath) || strings.HasPrefix(next, CallbackPath) {
		return "/"
	}
	return next
}

func unsafeInURL(r rune) bool { return r == '\\' || r < 0x20 || r == 0x7f }

// pageHeaders keep the Gate's pages out of caches and frames.
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
}

// sameOrigin refuses a form posted from another site (its Origin header
// names another host).
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

func intersects(a, b []string) bool {
	return slices.ContainsFunc(a, func(s string) bool { return slices.Contains(b, s) })
}

func sortedKeys(m map[string][]string) []string { return slices.Sorted(maps.Keys(m)) }
