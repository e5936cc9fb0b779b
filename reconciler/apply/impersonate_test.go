package apply_test

import (
	"fmt"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// TestImpersonatedDriftAndWithdrawal: a pair applied as a ServiceAccount
// (a tenant's) is also corrected and withdrawn as that ServiceAccount, so
// the cluster's RBAC for it holds there too: with its RoleBinding gone, a
// deleted object is not re-created and a withdrawal deletes nothing;
// with the binding back, both go through.
func TestImpersonatedDriftAndWithdrawal(t *testing.T) {
	ns := "impersonated"
	k := kube(t, mainCluster)
	binding := grantConfigMaps(t, k, ns, "writer")
	m := newManager(t, testOptions())
	c := target(t, m, mainCluster)
	req := apply.Request{
		Profile:     "impersonated",
		RenderHash:  "h1",
		SyncMode:    spec.SyncModeContinuousWithDriftDetection,
		Impersonate: "system:serviceaccount:" + ns + ":writer",
		Steps:       []apply.Step{step("a", configMap(ns, "kept", map[string]string{"v": "1"}))},
	}
	mustApplied(t, c.Apply(t.Context(), req))

	revoke(t, k, binding)
	deleteObject(t, k, getCM(t, k, ns, "kept"))
	window := time.Now().Add(3 * time.Second)
	for time.Now().Before(window) {
		if getCM(t, k, ns, "kept") != nil {
			t.Fatal("the drift correction was written with regatta's identity, not the ServiceAccount's")
		}
		time.Sleep(100 * time.Millisecond)
	}
	binding = grantConfigMaps(t, k, ns, "writer")
	testenv.WaitFor(t, 60*time.Second, "the deleted ConfigMap re-created as the ServiceAccount", func() bool {
		return getCM(t, k, ns, "kept") != nil
	})

	revoke(t, k, binding)
	if res := c.Withdraw(t.Context(), "impersonated", ""); res.State == apply.StateWithdrawn || getCM(t, k, ns, "kept") == nil {
		t.Fatalf("withdrawal without the ServiceAccount's RBAC: %s, ConfigMap left: %v", res.State, getCM(t, k, ns, "kept") != nil)
	}
	grantConfigMaps(t, k, ns, "writer")
	if res := c.Withdraw(t.Context(), "impersonated", ""); res.State != apply.StateWithdrawn || getCM(t, k, ns, "kept") != nil {
		t.Fatalf("withdrawal as the ServiceAccount: %s %v", res.State, res.Err)
	}
}

// grantConfigMaps makes namespace ns, ServiceAccount sa in it (once) and a
// Role and RoleBinding that let sa manage ConfigMaps there; it returns the
// binding.
func grantConfigMaps(t *testing.T, k client.Client, ns, sa string) *rbacv1.RoleBinding {
	t.Helper()
	meta := metav1.ObjectMeta{Name: sa, Namespace: ns}
	role := &rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""},
		Resources: []string{"configmaps"},
		Verbs:     []string{"get", "list", "watch", "create", "update", "patch", "delete"},
	}}}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: meta,
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: sa},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, &corev1.ServiceAccount{ObjectMeta: meta}, role, binding}
	for _, o := range objs {
		if err := k.Create(t.Context(), o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	waitGrant(t, k, ns, sa, true)
	return binding
}

// revoke deletes a grantConfigMaps binding and waits until the API
// server's RBAC no longer lets sa get ConfigMaps.
func revoke(t *testing.T, k client.Client, binding *rbacv1.RoleBinding) {
	t.Helper()
	deleteObject(t, k, binding)
	waitGrant(t, k, binding.Namespace, binding.Name, false)
}

// waitGrant waits until the API server's RBAC authorizer, which reads
// Roles and bindings through its informers, says whether sa may get
// ConfigMaps in ns as want.
func waitGrant(t *testing.T, k client.Client, ns, sa string, want bool) {
	t.Helper()
	user := "system:serviceaccount:" + ns + ":" + sa
	testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("RBAC: %s may get ConfigMaps in %s = %v", user, ns, want), func() bool {
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{User: user,
			ResourceAttributes: &authzv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "configmaps"}}}
		if err := k.Create(t.Context(), sar); err != nil {
			t.Fatal(err)
		}
		return sar.Status.Allowed == want
	})
}

func deleteObject(t *testing.T, k client.Client, o client.Object) {
	t.Helper()
	if err := k.Delete(t.Context(), o); err != nil {
		t.Fatal(err)
	}
}
