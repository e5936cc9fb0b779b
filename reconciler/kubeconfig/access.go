package kubeconfig

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/regatta-dev/regatta/reconciler/kubeconfig/cloud"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// Access is how regatta reaches a cluster: kubeconfig bytes (the apply
// Manager builds the client), or a REST config whose bearer token renews
// itself, with a Key that changes when its configuration does.
type Access struct {
	Kubeconfig []byte
	Config     *rest.Config
	Key        string
}

// Credentials resolves each cluster's Access and keeps the renewing token
// sources of cloud clusters and renewed ServiceAccount tokens across
// passes, one per cluster and configuration. Safe for concurrent use.
type Credentials struct {
	ctx   context.Context
	cloud cloud.Options

	mu      sync.Mutex
	renewed map[string]Access       // by cluster
	clouds  map[string]cloudCluster // by cluster
}

// cloudCluster is a cloud entry's Cluster and the digest of the
// configuration it was made of.
type cloudCluster struct {
	key string
	cl  *cloud.Cluster
}

// NewCredentials returns Credentials whose token fetches are bounded by
// ctx (the daemon's lifetime).
func NewCredentials(ctx context.Context, opts cloud.Options) *Credentials {
	return &Credentials{ctx: ctx, cloud: opts, renewed: map[string]Access{}, clouds: map[string]cloudCluster{}}
}

// Resolve returns how to reach c: a cloud provider's renewing tokens, a
// kubeconfig (Find) whose ServiceAccount token regatta renews, or the
// kubeconfig as it is. Errors name the cluster and provider, never a
// credential.
func (cr *Credentials) Resolve(ctx context.Context, tree fs.FS, keys *sops.Keyring, mgmt SecretGetter, c *spec.Cluster) (Access, error) {
	name := c.Metadata.Name
	if cc := c.Spec.Kubeconfig.Cloud; cc != nil {
		return cr.resolveCloud(ctx, name, cc)
	}
	kc, err := Find(ctx, tree, keys, mgmt, c)
	if err != nil || c.Spec.Kubeconfig.RenewToken == nil {
		return Access{Kubeconfig: kc}, err
	}
	r := c.Spec.Kubeconfig.RenewToken
	key := digest(string(kc), r.ServiceAccount.Namespace, r.ServiceAccount.Name, r.TokenExpiration().String())
	return cr.cached(name, key, func() (*rest.Config, error) {
		return renewingConfig(cr.ctx, name, kc, r)
	})
}

// resolveCloud returns the Access of a cloud cluster: its endpoint (given,
// or looked up and kept until the cluster seems to have moved) with
// renewing tokens. The Key changes with the configuration and the
// endpoint.
func (cr *Credentials) resolveCloud(ctx context.Context, name string, cc *spec.CloudCredentials) (Access, error) {
	key := digest(cc.Provider, cc.Server, cc.CertificateAuthorityData, cc.Cluster, cc.Region, cc.Audience)
	cr.mu.Lock()
	entry, ok := cr.clouds[name]
	if !ok || entry.key != key {
		cl, err := cloud.NewCluster(cr.ctx, name, cc, cr.cloud)
		if err != nil {
			cr.mu.Unlock()
			return Access{}, err
		}
		entry = cloudCluster{key: key, cl: cl}
		cr.clouds[name] = entry
	}
	cr.mu.Unlock()
	cfg, ep, err := entry.cl.Config(ctx)
	if err != nil {
		return Access{}, err
	}
	return Access{Config: cfg, Key: digest(key, ep.Server, string(ep.CAData))}, nil
}

// cached returns the cluster's Access of this key, building it when the
// cluster has none or another key (its configuration changed).
func (cr *Credentials) cached(name, key string, build func() (*rest.Config, error)) (Access, error) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if a, ok := cr.renewed[name]; ok && a.Key == key {
		return a, nil
	}
	cfg, err := build()
	if err != nil {
		return Access{}, err
	}
	a := Access{Config: cfg, Key: key}
	cr.renewed[name] = a
	return a, nil
}

// Forget drops a cluster that left the fleet.
func (cr *Credentials) Forget(name string) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	delete(cr.renewed, name)
	delete(cr.clouds, name)
}

func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}
