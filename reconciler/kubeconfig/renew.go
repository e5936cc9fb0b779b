package kubeconfig

import (
	"context"
	"fmt"

	"golang.org/x/oauth2"
	authnv1 "k8s.io/api/authentication/v1"
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
		return nil, &RenewError{Cluster: t.cluster, ServiceAccount: t.saName, Err: err,
			Reason: "TokenRequest refused (the token in use must be this ServiceAccount's, or may create serviceaccounts/token for it)"}
	}
	return &oauth2.Token{AccessToken: out.Status.Token, Expiry: out.Status.ExpirationTimestamp.Time}, nil
}

// Forget is a no-op: after a refused token the next Fetch starts again
// from the kubeconfig's token.
func (t *tokenRequester) Forget() {}
