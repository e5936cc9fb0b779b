package kubeconfig

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/transport"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig/cloud"
	"github.com/regatta-dev/regatta/spec"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "renew"}}}, &env)
}

// serviceAccount creates namespace/name allowed to read namespaces and to
// request tokens for itself only, and returns a kubeconfig holding a bound
// token of it bound to a Secret (deleting the Secret revokes that token).
func serviceAccount(t *testing.T, namespace, name string) (kubeconfig []byte, bound *corev1.Secret) {
	t.Helper()
	ctx := t.Context()
	cl := env.Cluster("renew")
	cs := kubernetes.NewForConfigOrDie(cl.RESTConfig())
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}))
	must(cs.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}))
	must(cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{}))
	must(cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: namespace + "-" + name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: namespace, Name: name}}}, metav1.CreateOptions{}))
	must(cs.RbacV1().Roles(namespace).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "token"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{name}, Verbs: []string{"create"}}}}, metav1.CreateOptions{}))
	must(cs.RbacV1().RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "token"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "token"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: namespace, Name: name}}}, metav1.CreateOptions{}))
	bound, err := cs.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bootstrap"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secs := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{
		ExpirationSeconds: &secs, BoundObjectRef: &authnv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "bootstrap", UID: bound.UID}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: cl.URL(), CertificateAuthorityData: cl.CAData()}
	cfg.AuthInfos["c"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "c"}
	cfg.CurrentContext = "c"
	kc, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kc, bound
}

// bearerSeen records the bearer tokens a client sends.
type bearerSeen struct {
	mu   sync.Mutex
	last string
	rt   http.RoundTripper
}

func (b *bearerSeen) RoundTrip(r *http.Request) (*http.Response, error) {
	b.mu.Lock()
	b.last = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	b.mu.Unlock()
	return b.rt.RoundTrip(r)
}

// jwtClaims decodes a JWT's claims (unverified: the API server verified it).
func jwtClaims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(b, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// TestServiceAccountTokenRenewed: with renewToken, the kubeconfig's token
// only requests a bound token of the named ServiceAccount (TokenRequest on
// the cluster itself) of the configured lifetime, and regatta works with
// that one: once the kubeconfig's token is revoked, requests still pass.
// Without renewToken, the same revocation fails the cluster.
func TestServiceAccountTokenRenewed(t *testing.T) {
	kc, bound := serviceAccount(t, "renew-a", "regatta")
	c := &spec.Cluster{Metadata: spec.ObjectMeta{Name: "renewed"}, Spec: spec.ClusterSpec{Kubeconfig: spec.KubeconfigSource{
		SecretRef:  spec.SecretKeyRef{Name: "renewed-kubeconfig", Namespace: "fleet", Key: "value"},
		RenewToken: &spec.TokenRenewal{ServiceAccount: spec.ServiceAccountRef{Namespace: "renew-a", Name: "regatta"}, Expiration: "2h"}}},
		Files: []string{"clusters/renewed/kubeconfig.yaml"}}
	tree := fstest.MapFS{"clusters/renewed/kubeconfig.yaml": {Data: []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: renewed-kubeconfig, namespace: fleet}\nstringData:\n  value: |\n" +
		indent(string(kc), "    "))}}
	creds := NewCredentials(t.Context(), cloud.Options{})
	a, err := creds.Resolve(t.Context(), tree, nil, nil, c)
	if err != nil || a.Config == nil {
		t.Fatalf("resolve: %+v, %v", a, err)
	}
	seen := &bearerSeen{}
	cfg := rest.CopyConfig(a.Config)
	// seen goes below the token's transport, to see the header it sets.
	cfg.WrapTransport = transport.Wrappers(func(rt http.RoundTripper) http.RoundTripper { seen.rt = rt; return seen }, a.Config.WrapTransport)
	cs := kubernetes.NewForConfigOrDie(cfg)
	get := func() error {
		_, err := cs.CoreV1().Namespaces().Get(t.Context(), "renew-a", metav1.GetOptions{})
		return err
	}
	if err := get(); err != nil {
		t.Fatal(err)
	}
	claims := jwtClaims(t, seen.last)
	if life := time.Duration(claims["exp"].(float64)-claims["iat"].(float64)) * time.Second; life != 2*time.Hour {
		t.Errorf("the token in use lives %s, want the renewToken.expiration 2h", life)
	}
	if k8s, _ := claims["kubernetes.io"].(map[string]any); k8s["secret"] != nil {
		t.Errorf("the token in use is the kubeconfig's (bound to Secret %v)", k8s["secret"])
	}
	again, err := creds.Resolve(t.Context(), tree, nil, nil, c)
	if err != nil || again.Config != a.Config {
		t.Fatalf("a second pass built a new config (%v): the renewed token would be lost", err)
	}
	if err := kubernetes.NewForConfigOrDie(env.Cluster("renew").RESTConfig()).CoreV1().Secrets("renew-a").Delete(t.Context(), bound.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	plain, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		_, err := kubernetes.NewForConfigOrDie(plain).CoreV1().Namespaces().Get(ctx, "renew-a", metav1.GetOptions{})
		if err == nil {
			return errorf("the kubeconfig's token still works after its Secret was deleted")
		}
		return nil
	})
	if err := get(); err != nil {
		t.Fatalf("with the renewed token, after the kubeconfig's token was revoked: %v", err)
	}
}

type errorf string

func (e errorf) Error() string { return string(e) }

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}

// TestRenewRefusedNamesServiceAccount: a renewToken naming a ServiceAccount
// the kubeconfig's token may not request tokens for fails the cluster with
// a message naming the cluster and ServiceAccount, never the token.
func TestRenewRefusedNamesServiceAccount(t *testing.T) {
	kc, _ := serviceAccount(t, "renew-b", "regatta")
	c := &spec.Cluster{Metadata: spec.ObjectMeta{Name: "wrong-sa"}, Spec: spec.ClusterSpec{Kubeconfig: spec.KubeconfigSource{
		SecretRef:  spec.SecretKeyRef{Name: "k", Namespace: "fleet", Key: "value"},
		RenewToken: &spec.TokenRenewal{ServiceAccount: spec.ServiceAccountRef{Namespace: "kube-system", Name: "default"}}}},
		Files: []string{"clusters/wrong-sa/k.yaml"}}
	tree := fstest.MapFS{"clusters/wrong-sa/k.yaml": {Data: []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: k, namespace: fleet}\nstringData:\n  value: |\n" + indent(string(kc), "    "))}}
	a, err := NewCredentials(t.Context(), cloud.Options{}).Resolve(t.Context(), tree, nil, nil, c)
	if err != nil {
		t.Fatal(err)
	}
	_, err = kubernetes.NewForConfigOrDie(a.Config).CoreV1().Namespaces().Get(t.Context(), "renew-b", metav1.GetOptions{})
	if err == nil || !strings.Contains(err.Error(), "cluster wrong-sa: renewing the token of ServiceAccount kube-system/default: TokenRequest refused") {
		t.Fatalf("error %v, want one naming the cluster and ServiceAccount", err)
	}
	cfg, _ := clientcmd.RESTConfigFromKubeConfig(kc)
	if strings.Contains(err.Error(), cfg.BearerToken) {
		t.Fatal("the error shows the token")
	}
}

// TestRenewBootstrapTokenRefusedSaysWhat: when the kubeconfig Secret's own
// token is no longer accepted (its bound object deleted; or expired),
// the cluster's error says so and what to do (a fresh token in the
// Secret: regatta does not write renewed tokens back), never the token.
func TestRenewBootstrapTokenRefusedSaysWhat(t *testing.T) {
	kc, bound := serviceAccount(t, "renew-c", "regatta")
	admin := kubernetes.NewForConfigOrDie(env.Cluster("renew").RESTConfig())
	if err := admin.CoreV1().Secrets("renew-c").Delete(t.Context(), bound.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expired := "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(`{"exp":1577836800,"sub":"system:serviceaccount:renew-c:regatta"}`)) + ".c2ln"
	plain, err := clientcmd.Load(kc)
	if err != nil {
		t.Fatal(err)
	}
	plain.AuthInfos["c"].Token = expired
	kcExpired, err := clientcmd.Write(*plain)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		kc         []byte
	}{
		{"revoked", "the kubeconfig's token is not accepted (revoked, its bound object deleted, or expired)", kc},
		{"expired", "the kubeconfig's token expired at 2020-01-01T00:00:00Z", kcExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &spec.Cluster{Metadata: spec.ObjectMeta{Name: tc.name}, Spec: spec.ClusterSpec{Kubeconfig: spec.KubeconfigSource{
				SecretRef:  spec.SecretKeyRef{Name: "k", Namespace: "fleet", Key: "value"},
				RenewToken: &spec.TokenRenewal{ServiceAccount: spec.ServiceAccountRef{Namespace: "renew-c", Name: "regatta"}}}},
				Files: []string{"clusters/" + tc.name + "/k.yaml"}}
			tree := fstest.MapFS{"clusters/" + tc.name + "/k.yaml": {Data: []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: k, namespace: fleet}\nstringData:\n  value: |\n" + indent(string(tc.kc), "    "))}}
			want := "cluster " + tc.name + ": renewing the token of ServiceAccount renew-c/regatta: " + tc.want +
				": put a fresh token of the ServiceAccount in the kubeconfig Secret (kubectl create token regatta -n renew-c --duration=168h)"
			var last error
			testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
				// A new Credentials each time: a fresh source starts from
				// the kubeconfig's token.
				a, err := NewCredentials(ctx, cloud.Options{}).Resolve(ctx, tree, nil, nil, c)
				if err != nil {
					return err
				}
				_, last = kubernetes.NewForConfigOrDie(a.Config).CoreV1().Namespaces().Get(ctx, "renew-c", metav1.GetOptions{})
				if last == nil || !strings.Contains(last.Error(), want) {
					return fmt.Errorf("error %v, want %q", last, want)
				}
				return nil
			})
			cfg, _ := clientcmd.RESTConfigFromKubeConfig(tc.kc)
			if strings.Contains(last.Error(), cfg.BearerToken) {
				t.Fatal("the error shows the token")
			}
		})
	}
}
