package kubeconfig

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"golang.org/x/oauth2"
	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regatta-dev/regatta/reconciler/kubeconfig/token"
	"github.com/regatta-dev/regatta/spec"
)

// RenewError is a failure to renew a cluster's ServiceAccount token.
type RenewError struct {
	Cluster        string
	ServiceAccount string
	Reason         string
	Err            error
}

func (e *RenewError) Error() string {
	msg := fmt.Sprintf("cluster %s: renewing the token of ServiceAccount %s: %s", e.Cluster, e.ServiceAccount, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *RenewError) Unwrap() error { return e.Err }

// renewingConfig returns a REST config for the kubeconfig's cluster that
// authenticates with bound tokens of the ServiceAccount r names: the
// kubeconfig's token requests the first (TokenRequest on the cluster
// itself), each token requests the next before it expires. Only the
// kubeconfig's server, TLS settings and token are used.
func renewingConfig(ctx context.Context, cluster string, kc []byte, r *spec.TokenRenewal) (*rest.Config, error) {
	sa := r.ServiceAccount.Namespace + "/" + r.ServiceAccount.Name
	base, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return nil, &RenewError{Cluster: cluster, ServiceAccount: sa, Reason: "the kubeconfig cannot be used"}
	}
	if base.BearerToken == "" || base.ExecProvider != nil || base.AuthProvider != nil || base.BearerTokenFile != "" {
		return nil, &RenewError{Cluster: cluster, ServiceAccount: sa,
			Reason: "renewToken needs a kubeconfig whose user holds a ServiceAccount token (token:)"}
	}
	tls := rest.TLSClientConfig{CAData: base.CAData, ServerName: base.ServerName, Insecure: base.Insecure}
	f := &tokenRequester{cluster: cluster, sa: r.ServiceAccount, saName: sa, bootstrap: base.BearerToken,
		seconds: int64(r.TokenExpiration().Seconds()), host: base.Host, tls: tls}
	cfg := token.Config(base.Host, base.CAData, token.NewSource(ctx, f, nil))
	cfg.TLSClientConfig = tls
	return cfg, nil
}

// tokenRequester asks the cluster for a bound token of the ServiceAccount,
// authenticated with the token in use, or the kubeconfig's own when there
// is none (first use, or after the API server refused one).
type tokenRequester struct {
	cluster   string
	sa        spec.ServiceAccountRef
	saName    string
	bootstrap string
	seconds   int64
	host      string
	tls       rest.TLSClientConfig
}

// Fetch requests a new token with current's (or the kubeconfig's).
func (t *tokenRequester) Fetch(ctx context.Context, current *oauth2.Token) (*oauth2.Token, error) {
	bearer := t.bootstrap
	if current != nil {
		bearer = current.AccessToken
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: t.host, TLSClientConfig: t.tls, BearerToken: bearer})
	if err != nil {
		return nil, &RenewError{Cluster: t.cluster, ServiceAccount: t.saName, Reason: "client", Err: err}
	}
	tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &t.seconds}}
	out, err := cs.CoreV1().ServiceAccounts(t.sa.Namespace).CreateToken(ctx, t.sa.Name, tr, metav1.CreateOptions{})
	if err != nil {
		return nil, &RenewError{Cluster: t.cluster, ServiceAccount: t.saName, Err: err, Reason: t.refused(current == nil, err)}
	}
	return &oauth2.Token{AccessToken: out.Status.Token, Expiry: out.Status.ExpirationTimestamp.Time}, nil
}

// refused says why a TokenRequest was refused. When the kubeconfig's own
// token is not accepted (401), only a new token in the Secret helps:
// regatta does not write renewed tokens back (docs/operations.md says
// why), so the Secret's token must be valid whenever regatta starts.
func (t *tokenRequester) refused(bootstrap bool, err error) string {
	if !bootstrap || !apierrors.IsUnauthorized(err) {
		return "TokenRequest refused (the token in use must be this ServiceAccount's, or may create serviceaccounts/token for it)"
	}
	why := "the kubeconfig's token is not accepted (revoked, its bound object deleted, or expired)"
	if exp, ok := jwtExpiry(t.bootstrap); ok && time.Now().After(exp) {
		why = "the kubeconfig's token expired at " + exp.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%s: put a fresh token of the ServiceAccount in the kubeconfig Secret (kubectl create token %s -n %s --duration=168h); "+
		"regatta does not write the tokens it renews back", why, t.sa.Name, t.sa.Namespace)
}

// jwtExpiry reads the exp claim of a JWT, unverified (only to explain a
// refusal; the API server verified it).
func jwtExpiry(tok string) (time.Time, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == 0 {
		return time.Time{}, false
	}
	return time.Unix(claims.Exp, 0), true
}

// Forget is a no-op: after a refused token the next Fetch starts again
// from the kubeconfig's token.
func (t *tokenRequester) Forget() {}
