package spec

import (
	"k8s.io/apimachinery/pkg/labels"
)

// KindTenant is the kind of tenants/<name>/tenant.yaml.
const KindTenant = "Tenant"

// Folders and files of tenants.
const (
	TenantsDir        = "tenants"
	TenantFile        = "tenant.yaml"
	TenantProfilesDir = "profiles"
)

// Tenant is a team the platform lets deploy its own profiles, from
// tenants/<name>/profiles/, to some clusters and namespaces only:
// tenants/<name>/tenant.yaml. The platform team owns the declaration; the
// tenant owns the rest of its folder.
type Tenant struct {
	TypeMeta `yaml:",inline"`
	Metadata ObjectMeta `yaml:"metadata"`
	Spec     TenantSpec `yaml:"spec"`

	Source Source `yaml:"-"`
	// selector is Spec.Clusters.Selector compiled by Load.
	selector labels.Selector
}

// TenantSpec is the body of a Tenant.
type TenantSpec struct {
	// Owners approve changes to the tenant's folder (regatta codeowners):
	// Git host users or teams such as @org/team-a.
	Owners []string `yaml:"owners,omitempty"`
	// Clusters the tenant's profiles may reach; a profile selecting others
	// does not reach them.
	Clusters TenantClusters `yaml:"clusters"`
	// Namespaces the tenant's objects may be in: names or globs (team-a-*).
	Namespaces []string `yaml:"namespaces"`
	// Kinds the tenant may deploy. A kind of "*" allows every namespaced
	// kind of the group; a cluster-scoped kind must be listed by name.
	Kinds []TenantKind `yaml:"kinds"`
	// ServiceAccount is the identity the tenant's objects are applied with
	// in the target cluster.
	ServiceAccount TenantServiceAccount `yaml:"serviceAccount,omitempty"`
	// NotificationSecrets are the Secrets (in regatta's namespace of the
	// management cluster) the tenant's alerts may send through
	// (tenants/<name>/alerts/); none: its alerts send nowhere.
	NotificationSecrets []string `yaml:"notificationSecrets,omitempty"`
	// Decryption lists the keys (age, PGP, KMS, Vault ...) that may decrypt
	// the tenant's SOPS files. Empty: the tenant's files are never
	// decrypted.
	Decryption *Decryption `yaml:"decryption,omitempty"`
}

// TenantClusters selects the clusters of a tenant: listed by name, or
// matched by the selector.
type TenantClusters struct {
	Names    []string      `yaml:"names,omitempty"`
	Selector LabelSelector `yaml:"selector,omitempty"`
}

// TenantKind allows one kind (or, with "*", every namespaced kind) of an
// API group ("" is the core group).
type TenantKind struct {
	Group string `yaml:"group,omitempty"`
	Kind  string `yaml:"kind"`
}

// TenantServiceAccount is the ServiceAccount a tenant's objects are applied
// as (impersonated by regatta).
type TenantServiceAccount struct {
	// Name defaults to tenant-<tenant>.
	Name string `yaml:"name,omitempty"`
	// Namespace defaults to regatta-system, which the tenant cannot write.
	Namespace string `yaml:"namespace,omitempty"`
	// Create, true by default, makes regatta create the ServiceAccount and
	// the Roles and RoleBindings the declaration implies. False uses one
	// the cluster already has, with its own RBAC.
	Create *bool `yaml:"create,omitempty"`
}

// Creates reports whether regatta creates the ServiceAccount and its RBAC.
func (s TenantServiceAccount) Creates() bool { return s.Create == nil || *s.Create }

// Username is the Kubernetes user name of the ServiceAccount, for
// impersonation.
func (s TenantServiceAccount) Username() string {
	return "system:serviceaccount:" + s.Namespace + ":" + s.Name
}

// Name returns the tenant's name.
func (t *Tenant) Name() string { return t.Metadata.Name }

// Root is the tenant's folder: every path its profiles read is inside it.
func (t *Tenant) Root() string { return TenantsDir + "/" + t.Metadata.Name }

// AllowsCluster reports whether the tenant may reach the cluster with the
// given name and effective labels.
func (t *Tenant) AllowsCluster(cluster string, lbls map[string]string) bool {
	for _, n := range t.Spec.Clusters.Names {
		if n == cluster {
			return true
		}
	}
	return t.selector != nil && t.selector.Matches(labels.Set(lbls))
}

// Tenant returns the tenant a profile belongs to, or nil for a platform
// profile.
func (p *Profile) Tenant() *Tenant { return p.tenant }

// Root is the folder a profile's paths must stay in: the tenant's folder,
// or "" (the whole repository) for a platform profile.
func (p *Profile) Root() string {
	if p.tenant == nil {
		return ""
	}
	return p.tenant.Root()
}

// Tenant returns the tenant with the given name, or nil.
func (r *Repository) Tenant(name string) *Tenant {
	for _, t := range r.Tenants {
		if t.Metadata.Name == name {
			return t
		}
	}
	return nil
}
