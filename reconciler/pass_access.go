package reconciler

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// clusterFor returns the apply Manager's handle of c, reached as its
// cluster.yaml says: a kubeconfig Secret, a renewed ServiceAccount token or
// a cloud provider's short-lived tokens.
func (r *Reconciler) clusterFor(ctx context.Context, tree fs.FS, c *spec.Cluster) (*apply.Cluster, error) {
	a, err := r.opts.Credentials.Resolve(ctx, tree, r.opts.Keys, r.opts.Management, c)
	var cl *apply.Cluster
	switch {
	case err != nil:
	case a.Config != nil:
		cl, err = r.opts.Apply.ClusterFor(c.Metadata.Name, a.Config, a.Key)
	default:
		cl, err = r.opts.Apply.Cluster(c.Metadata.Name, a.Kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cl.SetNamespaces(c.Spec.Namespaces)
	return cl, nil
}
