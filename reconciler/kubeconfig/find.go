package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// SecretGetter reads a Secret from the management cluster as an
// unstructured object's content.
type SecretGetter func(ctx context.Context, namespace, name string) (map[string]any, error)

// Find returns a cluster's kubeconfig: the Secret manifest its
// kubeconfig.secretRef names in its folder (decrypted with keys when
// SOPS-encrypted), else that Secret in the management cluster (mgmt, nil
// when there is none). Read it anew on every use: tokens rotate.
func Find(ctx context.Context, tree fs.FS, keys *sops.Keyring, mgmt SecretGetter, c *spec.Cluster) ([]byte, error) {
	b, err := FromRepository(ctx, tree, keys, c)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return b, err
	}
	if mgmt == nil {
		return nil, fmt.Errorf("%w, and no management cluster (--management-kubeconfig)", err)
	}
	ref := c.Spec.Kubeconfig.SecretRef
	secret, err := mgmt(ctx, ref.Namespace, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("management cluster: Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return FromSecret(secret, ref.Key)
}
