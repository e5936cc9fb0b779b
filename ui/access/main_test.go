package access

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// env holds the management cluster whose TokenReviews and
// SubjectAccessReviews the Gate asks.
var env *testenv.Env

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}}}, &env)
}

func admin(t *testing.T) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(env.Cluster("mgmt").RESTConfig())
}

// ensure creates obj unless it exists.
func ensure(t *testing.T, err error) {
	t.Helper()
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// viewerRoles creates the ClusterRoles the docs tell to grant:
// regatta-ui-fleet-viewer (get fleets/fleet) and, per tenant,
// regatta-ui-tenant-viewer-<t> (get tenants/<t>).
func viewerRoles(t *testing.T, tenants ...string) {
	t.Helper()
	cs := admin(t)
	roles := map[string]rbacv1.PolicyRule{
		"regatta-ui-fleet-viewer": {APIGroups: []string{Group}, Resources: []string{ResourceFleets}, ResourceNames: []string{DefaultFleetName}, Verbs: []string{"get"}},
	}
	for _, tn := range tenants {
		roles["regatta-ui-tenant-viewer-"+tn] = rbacv1.PolicyRule{APIGroups: []string{Group}, Resources: []string{ResourceTenants}, ResourceNames: []string{tn}, Verbs: []string{"get"}}
	}
	for name, rule := range roles {
		_, err := cs.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{})
		ensure(t, err)
	}
}

// bind binds the ClusterRole to subject.
func bind(t *testing.T, role string, subject rbacv1.Subject) {
	t.Helper()
	name := role + "-" + subject.Kind + "-" + subject.Namespace + "-" + subject.Name
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{GenerateName: "ui-access-"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{subject}}
	_, err := admin(t).RbacV1().ClusterRoleBindings().Create(t.Context(), crb, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("bind %s: %v", name, err)
	}
}

// serviceAccount creates ns/name, binds it the roles and returns a token
// of it (TokenRequest).
func serviceAccount(t *testing.T, ns, name string, roles ...string) string {
	t.Helper()
	cs := admin(t)
	_, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	ensure(t, err)
	_, err = cs.CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	ensure(t, err)
	for _, r := range roles {
		bind(t, r, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name})
	}
	hour := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// reviewerRule is what the chart grants regatta's ServiceAccount for
// the UI: create TokenReviews and SubjectAccessReviews, nothing else.
var reviewerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
}

// counter counts the requests of a real client by path.
type counter struct {
	mu   sync.Mutex
	hits map[string]int
	next http.RoundTripper
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.hits[r.URL.Path]++
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

func (c *counter) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits[path]
}

const (
	tokenReviews = "/apis/authentication.k8s.io/v1/tokenreviews"
	accessReview = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
)

// reviewer is a client of the management cluster with only the rights
// the chart gives regatta for the UI (a ServiceAccount token of
// namespace ns), counting its requests.
func reviewer(t *testing.T, ns string) (kubernetes.Interface, *counter) {
	t.Helper()
	_, err := admin(t).RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "regatta-ui-reviewer"}, Rules: reviewerRules}, metav1.CreateOptions{})
	ensure(t, err)
	token := serviceAccount(t, ns, "regatta", "regatta-ui-reviewer")
	cfg := rest.CopyConfig(env.Cluster("mgmt").RESTConfig())
	cfg.BearerToken = token
	c := &counter{hits: map[string]int{}}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { c.next = rt; return c })
	return kubernetes.NewForConfigOrDie(cfg), c
}

// echo answers the request's Viewer as JSON: the UI's stand-in.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(ViewerFrom(r.Context()))
})

func decodeViewer(t *testing.T, resp *http.Response) Viewer {
	t.Helper()
	var v Viewer
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("%s: %v", resp.Request.URL, err)
	}
	return v
}
