package cloud_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Local stand-ins of the clouds' token services, on loopback. The SDKs
// fetch from them through their ordinary endpoint configuration
// (AWS_ENDPOINT_URL_STS, GCE_METADATA_HOST, AZURE_AUTHORITY_HOST), and
// the API server's token webhook verifies tokens against them, as EKS, GKE
// and AKS verify against the real services. Each issues tokens of a
// lifetime the test sets, and can revoke its identity.

func randomID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// identity is what a stand-in knows of the one workload identity it serves.
type identity struct {
	mu       sync.Mutex
	revoked  bool
	lifetime time.Duration
	issued   map[string]time.Time // token or access key -> expiry
	expired  int                  // expired tokens presented for verification
}

func newIdentity(lifetime time.Duration) *identity {
	return &identity{lifetime: lifetime, issued: map[string]time.Time{}}
}

func (id *identity) Revoke(revoked bool) {
	id.mu.Lock()
	defer id.mu.Unlock()
	id.revoked = revoked
}

// issue records a new token or key, or returns false when revoked.
func (id *identity) issue(tok string) (time.Duration, bool) {
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.revoked {
		return 0, false
	}
	id.issued[tok] = time.Now().Add(id.lifetime)
	return id.lifetime, true
}

// valid reports whether tok was issued, is not expired and the identity
// is not revoked; an expired token is counted.
func (id *identity) valid(tok string) bool {
	id.mu.Lock()
	defer id.mu.Unlock()
	exp, ok := id.issued[tok]
	if ok && time.Now().After(exp) {
		id.expired++
		return false
	}
	return ok && !id.revoked
}

// Expired returns how many expired tokens were presented.
func (id *identity) Expired() int {
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.expired
}

// Issued returns how many tokens were issued.
func (id *identity) Issued() int {
	id.mu.Lock()
	defer id.mu.Unlock()
	return len(id.issued)
}

// stsStandIn serves AssumeRoleWithWebIdentity (IRSA) and the presigned
// GetCallerIdentity of EKS tokens, whose SigV4 signature it checks with
// the secret it issued and whose date must be within the token lifetime.
type stsStandIn struct {
	*identity
	srv         *httptest.Server
	roleARN     string
	webIdentity string // the projected ServiceAccount token it trusts
	clusterID   string
	// tokenLifetime is how long after its signing a presigned request
	// is accepted (EKS: 15 minutes).
	tokenLifetime time.Duration

	eks *directory // by <region>/<name>

	mu      sync.Mutex
	secrets map[string]aws.Credentials
	tokens  map[string]bool // signatures of the tokens verified
}

// Tokens returns how many different tokens were verified: EKS tokens are
// made by the client, the stand-in sees them only there.
func (s *stsStandIn) Tokens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tokens)
}

func newSTS(roleARN, webIdentity, clusterID string, lifetime time.Duration) *stsStandIn {
	s := &stsStandIn{identity: newIdentity(time.Hour), roleARN: roleARN, webIdentity: webIdentity,
		clusterID: clusterID, eks: newDirectory(), secrets: map[string]aws.Credentials{}, tokens: map[string]bool{}}
	s.tokenLifetime = lifetime
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *stsStandIn) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/clusters/") {
		s.describeCluster(w, r)
		return
	}
	_ = r.ParseForm()
	switch r.Form.Get("Action") {
	case "AssumeRoleWithWebIdentity":
		s.assumeRole(w, r)
	case "GetCallerIdentity":
		s.callerIdentity(w, r)
	default:
		stsError(w, http.StatusBadRequest, "InvalidAction", "unknown action")
	}
}

func stsError(w http.ResponseWriter, code int, errCode, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(code)
	fmt.Fprintf(w, `<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>1</RequestId></ErrorResponse>`, errCode, msg)
}

func (s *stsStandIn) assumeRole(w http.ResponseWriter, r *http.Request) {
	if r.Form.Get("RoleArn") != s.roleARN || r.Form.Get("WebIdentityToken") != s.webIdentity {
		stsError(w, http.StatusForbidden, "AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity")
		return
	}
	key := randomID("ASIA")
	life, ok := s.issue(key)
	if !ok {
		stsError(w, http.StatusForbidden, "AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity")
		return
	}
	creds := aws.Credentials{AccessKeyID: key, SecretAccessKey: randomID(""), SessionToken: randomID("session")}
	s.mu.Lock()
	s.secrets[key] = creds
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult>
<Credentials><AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s</SecretAccessKey><SessionToken>%s</SessionToken><Expiration>%s</Expiration></Credentials>
<AssumedRoleUser><Arn>%s/regatta</Arn><AssumedRoleId>AROA:regatta</AssumedRoleId></AssumedRoleUser>
</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>`,
		creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken, time.Now().Add(life).UTC().Format(time.RFC3339), s.roleARN)
}

// callerIdentity checks a presigned GetCallerIdentity: the cluster header,
// the signature (recomputed with the issued secret), the date.
func (s *stsStandIn) callerIdentity(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	key, _, _ := strings.Cut(q.Get("X-Amz-Credential"), "/")
	s.mu.Lock()
	creds, known := s.secrets[key]
	s.mu.Unlock()
	signed, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	switch {
	case !known || !s.valid(key):
		stsError(w, http.StatusForbidden, "InvalidClientTokenId", "The security token included in the request is invalid")
	case err != nil || time.Since(signed) > s.tokenLifetime:
		s.identity.mu.Lock()
		s.identity.expired++
		s.identity.mu.Unlock()
		stsError(w, http.StatusForbidden, "ExpiredToken", "The request has expired")
	case r.Header.Get("x-k8s-aws-id") != s.clusterID || !strings.Contains(q.Get("X-Amz-SignedHeaders"), "x-k8s-aws-id"):
		stsError(w, http.StatusForbidden, "SignatureDoesNotMatch", "x-k8s-aws-id is not signed or names another cluster")
	case !signatureMatches(r, creds, signed):
		stsError(w, http.StatusForbidden, "SignatureDoesNotMatch", "The request signature does not match")
	default:
		s.mu.Lock()
		s.tokens[q.Get("X-Amz-Signature")] = true
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(w, `<GetCallerIdentityResponse><GetCallerIdentityResult><Arn>%s/regatta</Arn><UserId>AROA:regatta</UserId><Account>111122223333</Account></GetCallerIdentityResult></GetCallerIdentityResponse>`, s.roleARN)
	}
}

func signatureMatches(r *http.Request, creds aws.Credentials, signed time.Time) bool {
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	q := u.Query()
	got := q.Get("X-Amz-Signature")
	q.Del("X-Amz-Signature")
	u.RawQuery = q.Encode()
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, u.String(), nil)
	req.Header.Set("x-k8s-aws-id", r.Header.Get("x-k8s-aws-id"))
	region := strings.Split(q.Get("X-Amz-Credential"), "/")[2]
	uri, _, err := v4.NewSigner().PresignHTTP(r.Context(), creds, req, emptySHA256, "sts", region, signed)
	if err != nil {
		return false
	}
	want, _ := url.Parse(uri)
	return got != "" && want.Query().Get("X-Amz-Signature") == got
}

// metadataStandIn is a GKE metadata server (GCE_METADATA_HOST) with a
// tokeninfo endpoint for the webhook.
type metadataStandIn struct {
	*identity
	srv   *httptest.Server
	email string
	gke   *directory // by projects/<p>/locations/<l>/clusters/<n>
}

func newMetadata(email string, lifetime time.Duration) *metadataStandIn {
	m := &metadataStandIn{identity: newIdentity(lifetime), email: email, gke: newDirectory()}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	return m
}

func (m *metadataStandIn) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/computeMetadata/") && r.Header.Get("Metadata-Flavor") != "Google" {
		http.Error(w, "missing Metadata-Flavor", http.StatusForbidden)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/v1/projects/") {
		m.clustersGet(w, r)
		return
	}
	w.Header().Set("Metadata-Flavor", "Google")
	switch r.URL.Path {
	case "/computeMetadata/v1/project/project-id":
		fmt.Fprint(w, "regatta-test")
	case "/computeMetadata/v1/instance/service-accounts/default/token":
		tok := randomID("ya29.")
		life, ok := m.issue(tok)
		if !ok {
			http.Error(w, "The Kubernetes ServiceAccount is not bound to a Google service account", http.StatusForbidden)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "expires_in": int(life.Seconds()), "token_type": "Bearer"})
	case "/tokeninfo":
		if !m.valid(r.URL.Query().Get("access_token")) {
			http.Error(w, `{"error_description": "Invalid Value"}`, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"email": m.email})
	default:
		http.NotFound(w, r)
	}
}

// entraStandIn is an Entra ID authority (AZURE_AUTHORITY_HOST, TLS) that
// exchanges the federated ServiceAccount token for an access token to
// the AKS server application, with a verification endpoint for the
// webhook.
type entraStandIn struct {
	*identity
	srv       *httptest.Server
	tenant    string
	clientID  string
	assertion string
	aks       *directory // by lowercase resource ID
}

func newEntra(tenant, clientID, assertion string, lifetime time.Duration) *entraStandIn {
	e := &entraStandIn{identity: newIdentity(lifetime), tenant: tenant, clientID: clientID, assertion: assertion, aks: newDirectory()}
	e.srv = httptest.NewTLSServer(http.HandlerFunc(e.serve))
	return e
}

func (e *entraStandIn) serve(w http.ResponseWriter, r *http.Request) {
	if armPath(r.URL.Path) {
		e.managedCluster(w, r)
		return
	}
	base := e.srv.URL + "/" + e.tenant
	switch r.URL.Path {
	case "/" + e.tenant + "/v2.0/.well-known/openid-configuration":
		_ = json.NewEncoder(w).Encode(map[string]any{
			"token_endpoint": base + "/oauth2/v2.0/token", "authorization_endpoint": base + "/oauth2/v2.0/authorize",
			"issuer": base + "/v2.0"})
	case "/" + e.tenant + "/oauth2/v2.0/token":
		e.token(w, r)
	case "/verify":
		if !e.valid(r.URL.Query().Get("token")) {
			http.Error(w, "invalid token", http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"oid": e.clientID})
	default:
		http.NotFound(w, r)
	}
}

func (e *entraStandIn) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	aadError := func(code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": code, "error_description": desc})
	}
	if r.Form.Get("client_id") != e.clientID || r.Form.Get("client_assertion") != e.assertion {
		aadError("invalid_client", "AADSTS700213: No matching federated identity record found")
		return
	}
	prefix := "aad."
	switch scopes := strings.Fields(r.Form.Get("scope")); {
	case slices.Contains(scopes, e.armScope()):
		prefix = "arm." // not accepted by the API server's webhook
	case !slices.Contains(scopes, "6dae42f8-4368-4678-94ff-3960e28e3630/.default"):
		aadError("invalid_scope", "AADSTS70011: the scope is neither the AKS server application nor ARM")
		return
	}
	tok := randomID(prefix)
	life, ok := e.issue(tok)
	if !ok {
		aadError("unauthorized_client", "AADSTS700016: Application not found in the directory")
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"token_type": "Bearer", "access_token": tok,
		"expires_in": int(life.Seconds()), "ext_expires_in": int(life.Seconds())})
}

// webhook is the API server's TokenReview webhook: it verifies each kind
// of token with its stand-in, as EKS's aws-iam-authenticator, GKE and AKS
// do with the real services.
type webhook struct {
	srv   *httptest.Server
	sts   *stsStandIn
	gcp   *metadataStandIn
	entra *entraStandIn
}

func newWebhook(s *stsStandIn, g *metadataStandIn, e *entraStandIn) *webhook {
	wh := &webhook{sts: s, gcp: g, entra: e}
	wh.srv = httptest.NewServer(http.HandlerFunc(wh.serve))
	return wh
}

type tokenReview struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Token string `json:"token"`
	} `json:"spec"`
	Status struct {
		Authenticated bool `json:"authenticated"`
		User          struct {
			Username string `json:"username,omitempty"`
		} `json:"user"`
	} `json:"status"`
}

func (wh *webhook) serve(w http.ResponseWriter, r *http.Request) {
	var tr tokenReview
	if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	user, ok := wh.verify(r.Context(), tr.Spec.Token)
	tr.Spec.Token = ""
	tr.Status.Authenticated = ok
	tr.Status.User.Username = user
	_ = json.NewEncoder(w).Encode(tr)
}

func (wh *webhook) verify(ctx context.Context, tok string) (string, bool) {
	switch {
	case strings.HasPrefix(tok, "k8s-aws-v1."):
		return wh.verifyAWS(ctx, strings.TrimPrefix(tok, "k8s-aws-v1."))
	case strings.HasPrefix(tok, "ya29."):
		ok := get(ctx, http.DefaultClient, wh.gcp.srv.URL+"/tokeninfo?access_token="+url.QueryEscape(tok), nil) == nil
		return "gcp:" + wh.gcp.email, ok
	case strings.HasPrefix(tok, "aad."):
		ok := get(ctx, wh.entra.srv.Client(), wh.entra.srv.URL+"/verify?token="+url.QueryEscape(tok), nil) == nil
		return "azure:" + wh.entra.clientID, ok
	}
	return "", false
}

// verifyAWS calls the presigned URL, as aws-iam-authenticator does: only
// on the STS host it trusts, with the cluster ID header.
func (wh *webhook) verifyAWS(ctx context.Context, enc string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return "", false
	}
	u, err := url.Parse(string(raw))
	if err != nil || "http://"+u.Host != wh.sts.srv.URL || u.Query().Get("Action") != "GetCallerIdentity" {
		return "", false
	}
	var out struct {
		Arn string `xml:"GetCallerIdentityResult>Arn"`
	}
	err = get(ctx, http.DefaultClient, u.String(), func(b []byte) error { return xml.Unmarshal(b, &out) },
		"x-k8s-aws-id", wh.sts.clusterID)
	return "aws:" + out.Arn, err == nil
}

// get GETs url with header pairs and hands a 200 body to decode.
func get(ctx context.Context, client *http.Client, u string, decode func([]byte) error, header ...string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, body)
	}
	if decode != nil {
		return decode(body)
	}
	return nil
}
