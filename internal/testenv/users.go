package testenv

import (
	"context"
	"fmt"
	"net"
	"strconv"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Logical clusters on one API server
//
// Many cluster entries may reach one API server, each through an address
// of its own (127.0.0.2, 127.0.1.7, ...: its own client, connections and
// watches, as separate clusters would have) and, when namespace-scoped,
// with credentials its RBAC limits to its namespaces. The API server must
// listen beyond 127.0.0.1 for the other loopback addresses: start it with
// APIServerFlags "--bind-address=0.0.0.0" (the later flag wins).

// urlAt is the cluster's URL through host ("" is 127.0.0.1).
func (c *Cluster) urlAt(host string) string {
	if host == "" {
		return c.URL()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return "https://" + net.JoinHostPort(host, strconv.Itoa(c.port))
}

// KubeconfigAt returns the admin kubeconfig reaching the cluster through
// host, e.g. 127.0.0.2; the serving certificate is checked for the name
// localhost, which it carries for every address.
func (c *Cluster) KubeconfigAt(host string) []byte {
	return c.writeKubeconfig(c.urlAt(host), c.files.adminToken, "localhost")
}

// NamespaceUser creates, as the admin, the namespaces (when missing) and
// a ServiceAccount name in the first of them whose RBAC reaches only those
// namespaces: in each, a Role with every verb on every resource, bound to
// it. It returns a kubeconfig reaching the cluster through host ("" is
// 127.0.0.1) with a token of the ServiceAccount (TokenRequest, valid for
// a day): nothing cluster-wide may be read or written with it, not even
// Namespaces.
func (c *Cluster) NamespaceUser(ctx context.Context, name string, namespaces []string, host string) ([]byte, error) {
	if len(namespaces) == 0 {
		return nil, fmt.Errorf("testenv: user %s: no namespaces", name)
	}
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return nil, err
	}
	home := namespaces[0]
	for _, ns := range namespaces {
		if err := grantNamespace(ctx, cs, ns, home, name); err != nil {
			return nil, fmt.Errorf("testenv: user %s: namespace %s: %w", name, ns, err)
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: home}}
	if _, err := cs.CoreV1().ServiceAccounts(home).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("testenv: user %s: %w", name, err)
	}
	day := int64(24 * 3600)
	tr, err := cs.CoreV1().ServiceAccounts(home).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &day}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("testenv: user %s: token: %w", name, err)
	}
	return c.writeKubeconfig(c.urlAt(host), tr.Status.Token, "localhost"), nil
}

// grantNamespace creates ns when missing and gives the ServiceAccount
// home/name every right in it.
func grantNamespace(ctx context.Context, cs kubernetes.Interface, ns, home, name string) error {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: home, Name: name}}}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
