package app

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// tenantToken makes a ServiceAccount allowed to see tenant (get
// tenants.regatta.dev/<tenant>) and returns a token of it.
func tenantToken(t *testing.T, cs kubernetes.Interface, tenant string) string {
	t.Helper()
	ctx := t.Context()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant}}, metav1.CreateOptions{}))
	must(cs.CoreV1().ServiceAccounts(tenant).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}, metav1.CreateOptions{}))
	role := "regatta-ui-tenant-viewer-" + tenant
	must(cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"regatta.dev"}, Resources: []string{"tenants"}, ResourceNames: []string{tenant}, Verbs: []string{"get"}}}}, metav1.CreateOptions{}))
	must(cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: tenant}}}, metav1.CreateOptions{}))
	hour := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(tenant).CreateToken(ctx, "reader",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// `regatta ui --ui-auth kubernetes` lets a tenant's token see that
// tenant's clusters only; another tenant's cluster answers 403, and a
// reader without a token is sent to the login.
func TestUICommandWithKubernetesAccess(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "uimgmt"}}})
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.Cluster("uimgmt").Kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	token := tenantToken(t, kubernetes.NewForConfigOrDie(env.Cluster("uimgmt").RESTConfig()), "team-a")
	rev := strings.Repeat("1", 40)
	dir := statusRepo(t, status.Snapshot{Fleet: status.Fleet{SourceRevision: rev, AppliedRevision: rev}, Clusters: []status.ClusterStatus{
		{Cluster: "a-1", SourceRevision: rev, Reachable: true, Profiles: []status.Profile{{Name: "app", Tenant: "team-a", State: status.StateApplied, Revision: rev}}},
		{Cluster: "b-1", SourceRevision: rev, Reachable: true, Profiles: []status.Profile{{Name: "billing", Tenant: "team-b", State: status.StateFailed, Revision: rev}}},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &uiFlags{addr: "127.0.0.1:0", statusBranch: DefaultStatusBranch, refresh: time.Second, title: "regatta",
		logFormat: "text", logLevel: "info", managementKubeconfig: kubeconfig}
	f.access.Auth = "kubernetes"
	base, done := startUI(t, ctx, f, dir)

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	fetch := func(path, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Accept", "text/html")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := fetch("/", token)
	if code != http.StatusOK || !strings.Contains(body, `<tr data-cluster="a-1"`) || strings.Contains(body, "b-1") || strings.Contains(body, "billing") {
		t.Errorf("team-a's fleet page (%d): want a-1 only:\n%.2000s", code, body)
	}
	if code, _ := fetch("/clusters/b-1", token); code != http.StatusForbidden {
		t.Errorf("team-a GET /clusters/b-1: %d, want 403", code)
	}
	if code, _ := fetch("/clusters/a-1", token); code != http.StatusOK {
		t.Errorf("team-a GET /clusters/a-1: %d, want 200", code)
	}
	if code, _ := fetch("/", ""); code != http.StatusFound {
		t.Errorf("no token: %d, want a redirect to the login", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("regatta ui ended with %v", err)
	}
}
