package diff

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/regatta-dev/regatta/reconciler/kubeconfig"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// KubeconfigFunc returns the kubeconfig of a cluster.
type KubeconfigFunc func(ctx context.Context, c *spec.Cluster) ([]byte, error)

// ErrNoKubeconfig is wrapped when a cluster's kubeconfig cannot be found.
var ErrNoKubeconfig = kubeconfig.ErrNotFound

// KubeconfigFromRepository finds a cluster's kubeconfig as the daemon does
// (kubeconfig.FromRepository): the Secret its kubeconfig.secretRef
// names among the manifests of its folder, SOPS-decrypted with keys.
func KubeconfigFromRepository(tree fs.FS, keys *sops.Keyring) KubeconfigFunc {
	return func(ctx context.Context, c *spec.Cluster) ([]byte, error) {
		b, err := kubeconfig.FromRepository(ctx, tree, keys, c)
		if errors.Is(err, ErrNoKubeconfig) {
			return nil, fmt.Errorf("%w (or use --kubeconfig-dir)", err)
		}
		return b, err
	}
}

// KubeconfigFromDir reads a cluster's kubeconfig from dir: the file named
// after the cluster, with the extension .yaml, .kubeconfig or none.
func KubeconfigFromDir(dir string) KubeconfigFunc {
	return func(_ context.Context, c *spec.Cluster) ([]byte, error) {
		name := c.Metadata.Name
		for _, f := range []string{name + ".yaml", name + ".kubeconfig", name} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err == nil {
				return b, nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
		return nil, fmt.Errorf("%w: no %s.yaml, %s.kubeconfig or %s in %s", ErrNoKubeconfig, name, name, name, dir)
	}
}
