package deploy

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/spf13/pflag"

	"github.com/regatta-dev/regatta/cmd/regatta/app"
	"github.com/regatta-dev/regatta/internal/testenv"
	uiaccess "github.com/regatta-dev/regatta/ui/access"
)

const fleetURL = "https://git.example.com/fleet.git"

func renderUI(t *testing.T, ns string, kv map[string]any) []*unstructured.Unstructured {
	t.Helper()
	kv["fleet.repository.url"] = fleetURL
	objs, err := loadChart(t).Render(context.Background(), ns, values(kv))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// uiArgs are the workload's --ui-* arguments, checked to parse as the
// flags of ui/access (plus --ui-addr, the UI's own).
func uiArgs(t *testing.T, objs []*unstructured.Unstructured) (uiaccess.Flags, string, []string) {
	t.Helper()
	deployment := find(objs, "Deployment", "")
	run, _, err := app.NewRootCommand(io.Discard, io.Discard).Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	checkFlags(t, run, "the chart with ui values", deployment) // regatta run takes every flag the chart gives
	var ui []string
	for _, a := range containerArgs(t, deployment) {
		if strings.HasPrefix(a, "--ui-") {
			ui = append(ui, a)
		}
	}
	var f uiaccess.Flags
	fl := pflag.NewFlagSet("ui", pflag.ContinueOnError)
	f.Register(fl)
	addr := fl.String("ui-addr", "", "")
	if err := fl.Parse(ui); err != nil {
		t.Fatalf("args %v: %v", ui, err)
	}
	return f, *addr, ui
}

// TestChartUIOffByDefault: without ui.enabled the chart renders no part
// of the web UI.
func TestChartUIOffByDefault(t *testing.T) {
	objs := renderUI(t, "ops", map[string]any{})
	for _, o := range objs {
		if strings.Contains(o.GetName(), "-ui") {
			t.Errorf("%s %s rendered without ui.enabled", o.GetKind(), o.GetName())
		}
	}
	if _, _, args := uiArgs(t, objs); len(args) > 0 {
		t.Errorf("args %v without ui.enabled", args)
	}
}

// TestChartUIKubernetes installs the UI with Kubernetes authentication
// and an Ingress on a real API server in a restricted namespace: the
// objects apply without warnings, the pod is admitted, regatta may create
// TokenReviews and SubjectAccessReviews (nothing more cluster-wide), and
// the rendered regatta-ui-fleet-viewer, bound to a user, answers the
// Gate's SubjectAccessReview for the fleet yes and for a tenant no.
func TestChartUIKubernetes(t *testing.T) {
	const ns = "chart-ui"
	objs := renderUI(t, ns, map[string]any{
		"rbac.kubeconfigSecretNamespaces": []any{ns},
		"ui.enabled":                      true,
		"ui.ingress.enabled":              true,
		"ui.ingress.host":                 "fleet.example.com",
		"ui.ingress.className":            "nginx",
		"ui.ingress.tlsSecretName":        "fleet-tls",
		"networkPolicy.uiFrom": []any{map[string]any{"namespaceSelector": map[string]any{
			"matchLabels": map[string]any{"kubernetes.io/metadata.name": "ingress-nginx"}}}},
	})
	f, addr, args := uiArgs(t, objs)
	if addr != ":9090" || f.Auth != uiaccess.ModeKubernetes || f.FleetName != "fleet" {
		t.Errorf("args %v", args)
	}
	svc := find(objs, "Service", "regatta-ui")
	if port := fmt.Sprint(svc.Object["spec"].(map[string]any)["ports"]); !strings.Contains(port, "port:80") || !strings.Contains(port, "targetPort:ui") {
		t.Errorf("Service ports %s", port)
	}
	if ing := find(objs, "Ingress", "regatta-ui"); ing == nil || !strings.Contains(fmt.Sprint(ing.Object["spec"]), "secretName:fleet-tls") ||
		!strings.Contains(fmt.Sprint(ing.Object["spec"]), "name:regatta-ui port:map[name:http]") {
		t.Errorf("Ingress %v", ing)
	}
	if np := fmt.Sprint(find(objs, "NetworkPolicy", "").Object["spec"]); !strings.Contains(np, "port:ui") || !strings.Contains(np, "ingress-nginx") {
		t.Errorf("NetworkPolicy %s lets no one reach the UI port", np)
	}
	cluster := env.Cluster("chart")
	objs = append([]*unstructured.Unstructured{restrictedNamespace(ns)}, objs...)
	if w := applyAll(t, cluster, objs); len(w) > 0 {
		t.Errorf("the API server warned: %q", w)
	}
	checkPodAdmitted(t, cluster, objs)
	checkAccess(t, cluster, "ui", ns, []access{
		{"create", "authentication.k8s.io", "tokenreviews", "", true},
		{"create", "authorization.k8s.io", "subjectaccessreviews", "", true},
		{"get", "regatta.dev", "fleets", "", false},
		{"list", "", "secrets", "", false},
	})
	cs := kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "chart-ui-alice"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "regatta-ui-fleet-viewer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(t.Context(), crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	allowed := func(res string) bool {
		resource, name, _ := strings.Cut(res, "/")
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: &authzv1.ResourceAttributes{
			Verb: "get", Group: uiaccess.Group, Resource: resource, Name: name}}}
		got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Status.Allowed
	}
	// the API server's RBAC authorizer sees a new binding through its
	// informers: wait until it grants what it grants, then check the rest
	testenv.WaitFor(t, 30*time.Second, "alice bound to regatta-ui-fleet-viewer allowed get fleets/fleet", func() bool {
		return allowed("fleets/fleet")
	})
	for _, res := range []string{"fleets/other", "tenants/a"} {
		if allowed(res) {
			t.Errorf("alice bound to regatta-ui-fleet-viewer: get %s allowed, want denied", res)
		}
	}
}

// TestChartUIOIDC: with ui.auth oidc the chart passes the provider, the
// redirect URL (the Ingress host's callback by default), the group
// mappings, and mounts the client secret and the shared cookie key.
func TestChartUIOIDC(t *testing.T) {
	objs := renderUI(t, "ops", map[string]any{
		"ui.enabled": true, "ui.auth": "oidc", "ui.port": 8443,
		"ui.ingress.enabled": true, "ui.ingress.host": "fleet.example.com",
		"ui.oidc.issuer": "https://id.example.com", "ui.oidc.clientID": "regatta",
		"ui.oidc.clientSecret.secretName": "regatta-oidc", "ui.oidc.cookieKey.secretName": "regatta-ui-cookie",
		"ui.oidc.scopes": []any{"profile", "email", "groups"}, "ui.oidc.fleetGroups": []any{"sre", "ops"},
		"ui.oidc.tenantGroups": map[string]any{"team-a": []any{"dev-a", "lead-a"}, "team-b": []any{"dev-b"}},
	})
	f, addr, args := uiArgs(t, objs)
	if addr != ":8443" || f.Auth != uiaccess.ModeOIDC || f.OIDCIssuer != "https://id.example.com" || f.OIDCClientID != "regatta" ||
		f.OIDCRedirectURL != "https://fleet.example.com/-/callback" || f.OIDCClientSecretFile != "/etc/regatta/ui-oidc/clientSecret" ||
		f.CookieKeyFile != "/etc/regatta/ui-cookie/cookieKey" || !slices.Equal(f.OIDCFleetGroups, []string{"sre", "ops"}) ||
		!slices.Equal(f.OIDCTenantGroups, []string{"team-a=dev-a", "team-a=lead-a", "team-b=dev-b"}) ||
		!slices.Equal(f.OIDCScopes, []string{"profile", "email", "groups"}) {
		t.Errorf("args %v parse as %+v", args, f)
	}
	d := find(objs, "Deployment", "")
	vols := fmt.Sprint(d.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["volumes"])
	mounts := fmt.Sprint(container(t, d)["volumeMounts"])
	for _, want := range []string{"secretName:regatta-oidc", "secretName:regatta-ui-cookie"} {
		if !strings.Contains(vols, want) {
			t.Errorf("volumes lack %s: %s", want, vols)
		}
	}
	for _, want := range []string{"mountPath:/etc/regatta/ui-oidc", "mountPath:/etc/regatta/ui-cookie"} {
		if !strings.Contains(mounts, want) {
			t.Errorf("mounts lack %s: %s", want, mounts)
		}
	}
}

// TestChartUIBadValues: UI values that cannot work fail at render,
// naming the value.
func TestChartUIBadValues(t *testing.T) {
	c := loadChart(t)
	oidc := map[string]any{"ui.enabled": true, "ui.auth": "oidc", "ui.oidc.issuer": "https://id.example.com",
		"ui.oidc.clientID": "regatta", "ui.oidc.redirectURL": "https://fleet.example.com/-/callback", "ui.oidc.cookieKey.secretName": "k"}
	without := func(key string) map[string]any {
		m := map[string]any{}
		for k, v := range oidc {
			if k != key {
				m[k] = v
			}
		}
		return m
	}
	for _, tc := range []struct {
		name string
		kv   map[string]any
		want string
	}{
		{"ingress without the UI", map[string]any{"ui.ingress.enabled": true, "ui.ingress.host": "h"}, "ui.ingress.enabled needs ui.enabled"},
		{"ingress without a host", map[string]any{"ui.enabled": true, "ui.ingress.enabled": true}, "ui.ingress.host is required"},
		{"no authentication", map[string]any{"ui.enabled": true, "ui.auth": "none"}, "/ui/auth"},
		{"on an agent", map[string]any{"ui.enabled": true, "agent.enabled": true, "agent.cluster": "edge-1"}, "not on an agent"},
		{"misspelt value", map[string]any{"ui.enabled": true, "ui.ingres.enabled": true}, "ingres"},
		{"oidc without issuer", without("ui.oidc.issuer"), "ui.oidc.issuer is required"},
		{"oidc without client", without("ui.oidc.clientID"), "ui.oidc.clientID is required"},
		{"oidc without redirect URL", without("ui.oidc.redirectURL"), "ui.oidc.redirectURL is required"},
		{"oidc without cookie key", without("ui.oidc.cookieKey.secretName"), "ui.oidc.cookieKey.secretName is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.kv["fleet.repository.url"] = fleetURL
			_, err := c.Render(context.Background(), "ops", values(tc.kv))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error saying %q", err, tc.want)
			}
		})
	}
}
