package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What identifies a cluster
//
// Two Cluster entries of a fleet may reach one API server (a folder copied
// under a new name, the management cluster registered twice, staging
// pointing at production). Inventories are keyed by fleet and profile, not
// by entry, so such entries would prune and withdraw each other's objects;
// the reconciler refuses all but one of them. What tells them apart:
//   - a whole-cluster entry is identified by the UID of the cluster's
//     kube-system Namespace (Identity): it exists on every cluster, never
//     changes for the cluster's life, differs between clusters, and does
//     not depend on the address a kubeconfig reaches the server through;
//   - a namespace-scoped entry (spec.namespaces) may not read kube-system;
//     it is identified by the namespaces it lists on its server.
// Which entry manages a cluster is recorded in the cluster itself, in a
// registration ConfigMap of the fleet (regatta-cluster.<fleet>) in the
// inventory namespace, and for a namespace-scoped entry in each of its
// namespaces. It names the entry; an entry finds another entry of the
// repository registered there and is refused. A registration naming an
// entry the repository no longer has (a renamed folder) is taken over, so
// a rename keeps the cluster's objects and inventories.

// RegistrationName is the ConfigMap that records which entry of a fleet
// manages a cluster, in the fleet without identity.
const RegistrationName = "regatta-cluster"

// registrationKey is the data key naming the entry.
const registrationKey = "cluster"

// registrationName is the registration ConfigMap's name in the fleet.
func (f Fleet) registrationName() string {
	if f.ID == "" {
		return RegistrationName
	}
	return RegistrationName + "." + f.ID
}

// ErrRegistrationRace is returned by Register when another writer changed
// the registration since it was read: read it again.
var ErrRegistrationRace = errors.New("the registration changed meanwhile")

// Registration is which entry of the fleet manages a cluster, or one
// namespace of it; Entry is "" when none is registered.
type Registration struct {
	Namespace string
	Entry     string
	// resourceVersion is the ConfigMap's, "" when it does not exist.
	resourceVersion string
}

// identity caches a client's cluster identity: a client is built for one
// kubeconfig, so the answer holds for the client's life.
type identity struct {
	mu  sync.Mutex
	uid string
}

// Identity returns the UID of the cluster's kube-system Namespace, read
// once per client.
func (c *Client) Identity(ctx context.Context) (string, error) {
	c.identity.mu.Lock()
	defer c.identity.mu.Unlock()
	if c.identity.uid != "" {
		return c.identity.uid, nil
	}
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := c.Kube.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ns); err != nil {
		return "", fmt.Errorf("cluster %s: read the kube-system Namespace (the cluster's identity): %w", c.Cluster, err)
	}
	c.identity.uid = string(ns.GetUID())
	return c.identity.uid, nil
}

// Identity returns the identity (Client.Identity) of the cluster an entry
// reaches with kubeconfig, through the entry's cached client.
func (m *Manager) Identity(ctx context.Context, name string, kubeconfig []byte) (string, error) {
	cl, _, err := m.clients.Get(name, kubeconfig)
	if err != nil {
		return "", err
	}
	return cl.Identity(ctx)
}

// IdentityFor is Identity for an entry reached with a REST config
// (ClusterFor).
func (m *Manager) IdentityFor(ctx context.Context, name string, cfg *rest.Config, key string) (string, error) {
	cl, _, err := m.clients.GetConfig(name, cfg, key)
	if err != nil {
		return "", err
	}
	return cl.Identity(ctx)
}

// registrationNamespaces are where the cluster's registrations live.
func (c *Cluster) registrationNamespaces() []string {
	if nss := c.Namespaces(); len(nss) > 0 {
		return nss
	}
	return []string{InventoryNamespace}
}

// Registrations reads the cluster's registrations: one in the inventory
// namespace of a whole-cluster entry, one per namespace of a
// namespace-scoped one.
func (c *Cluster) Registrations(ctx context.Context) ([]Registration, error) {
	kube := c.currentClient().Kube
	var out []Registration
	for _, ns := range c.registrationNamespaces() {
		cm := &corev1.ConfigMap{}
		err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.fleet().registrationName()}, cm)
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, Registration{Namespace: ns})
		case err != nil:
			return nil, c.wrap(ctx, fmt.Errorf("read registration ConfigMap/%s/%s: %w", ns, c.fleet().registrationName(), err))
		default:
			out = append(out, Registration{Namespace: ns, Entry: cm.Data[registrationKey], resourceVersion: cm.ResourceVersion})
		}
	}
	return out, nil
}

// Register records this entry in reg's place, provided it is unchanged
// since it was read (ErrRegistrationRace otherwise).
func (c *Cluster) Register(ctx context.Context, reg Registration) error {
	kube := c.currentClient().Kube
	f := c.fleet()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: reg.Namespace, Name: f.registrationName(),
		ResourceVersion: reg.resourceVersion, Labels: map[string]string{"app.kubernetes.io/managed-by": FieldManager}},
		Data: map[string]string{registrationKey: c.name}}
	if f.ID != "" {
		cm.Labels[LabelFleet] = f.ID
	}
	var err error
	if reg.resourceVersion != "" {
		err = kube.Update(ctx, cm)
	} else if err = kube.Create(ctx, cm); apierrors.IsNotFound(err) && len(c.Namespaces()) == 0 {
		if err = ensureNamespace(ctx, kube, reg.Namespace); err == nil {
			err = kube.Create(ctx, cm)
		}
	}
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return ErrRegistrationRace
	}
	if err != nil {
		return c.wrap(ctx, fmt.Errorf("register in ConfigMap/%s/%s: %w", reg.Namespace, cm.Name, err))
	}
	return nil
}
