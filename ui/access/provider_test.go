package access

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// provider is an OpenID provider on loopback, as the OpenID Connect Core
// and Discovery specifications describe one: a discovery document, a
// JWKS with its RSA key, an authorization endpoint that redirects back
// with a code (RFC 6749 4.1, with PKCE, RFC 7636), and a token endpoint
// that trades the code (once, for the client that asked, with its
// secret and verifier) for an ID token signed RS256.
type provider struct {
	srv      *httptest.Server
	key      *rsa.PrivateKey
	clientID string
	secret   string

	mu     sync.Mutex
	codes  map[string]authRequest
	user   string
	groups []string
	// lifetime of the ID tokens issued; negative: already expired.
	lifetime time.Duration
	// wrongNonce issues ID tokens with another nonce than asked.
	wrongNonce bool
}

// authRequest is what an authorization request asked, kept per code.
type authRequest struct {
	redirectURI, nonce, challenge string
}

func newProvider(t *testing.T) *provider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{key: key, clientID: "regatta-ui", secret: "client-secret", codes: map[string]authRequest{}, lifetime: time.Hour}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /keys", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// as sets who logs in next.
func (p *provider) as(user string, groups ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.user, p.groups = user, groups
}

func (p *provider) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{
		"issuer":                                p.srv.URL,
		"authorization_endpoint":                p.srv.URL + "/authorize",
		"token_endpoint":                        p.srv.URL + "/token",
		"jwks_uri":                              p.srv.URL + "/keys",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
	})
}

func (p *provider) jwks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
}

// authorize logs the user in at once (the provider's own login is not
// under test) and redirects back with a code and the state.
func (p *provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("response_type") != "code" || q.Get("client_id") != p.clientID || !slices.Contains(strings.Fields(q.Get("scope")), "openid") ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("redirect_uri") == "" {
		http.Error(w, "invalid_request: "+r.URL.RawQuery, http.StatusBadRequest)
		return
	}
	code := randomString()
	p.mu.Lock()
	p.codes[code] = authRequest{redirectURI: q.Get("redirect_uri"), nonce: q.Get("nonce"), challenge: q.Get("code_challenge")}
	p.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	back.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token trades a code for an ID token.
func (p *provider) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	if id != p.clientID || secret != p.secret {
		tokenError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	p.mu.Lock()
	req, ok := p.codes[r.PostFormValue("code")]
	delete(p.codes, r.PostFormValue("code")) // a code is used once
	user, groups, lifetime, wrongNonce := p.user, p.groups, p.lifetime, p.wrongNonce
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
	if !ok || r.PostFormValue("grant_type") != "authorization_code" || r.PostFormValue("redirect_uri") != req.redirectURI ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != req.challenge {
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	nonce := req.nonce
	if wrongNonce {
		nonce = "another-" + nonce
	}
	now := time.Now()
	idToken, err := p.sign(map[string]any{
		"iss": p.srv.URL, "sub": "id-" + user, "aud": p.clientID, "iat": now.Unix(), "exp": now.Add(lifetime).Unix(),
		"nonce": nonce, "email": user, "groups": groups,
	})
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, map[string]any{"access_token": randomString(), "token_type": "Bearer", "expires_in": 3600, "id_token": idToken})
}

// sign makes a JWS compact serialization (RS256, kid k1) of claims.
func (p *provider) sign(claims map[string]any) (string, error) {
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1")
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: p.key}, opts)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := s.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

func tokenError(w http.ResponseWriter, code int, e string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	writeJSON(w, map[string]string{"error": e})
}

func writeJSON(w http.ResponseWriter, v any) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	_ = json.NewEncoder(w).Encode(v)
}

func randomString() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
