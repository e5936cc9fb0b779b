package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// SecretGetter reads a Secret from the management cluster (nil when regatta
// runs without one). It returns the Secret as an unstructured object.
type SecretGetter func(ctx context.Context, namespace, name string) (map[string]any, error)

// kubeconfig finds the cluster's kubeconfig: a Secret manifest in its
// folder (decrypted with SOPS when encrypted), else a Secret in the
// management cluster. It is read anew on every pass: tokens rotate.
func kubeconfig(ctx context.Context, tree fs.FS, keys *sops.Keyring, mgmt SecretGetter, c *spec.Cluster) ([]byte, error) {
	b, err := apply.KubeconfigFromRepository(ctx, tree, keys, c)
	if err == nil || !errors.Is(err, apply.ErrNoKubeconfig) {
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
	return apply.KubeconfigFromSecret(secret, ref.Key)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
