package kubeconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	yaml "go.yaml.in/yaml/v3"

	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// ErrNotFound is wrapped when a cluster's folder holds no Secret
// manifest with the name its kubeconfig.secretRef gives.
var ErrNotFound = errors.New("kubeconfig not found")

// FromRepository finds a cluster's kubeconfig in the fleet
// repository: the Secret its kubeconfig.secretRef names, among the YAML
// files of its folder, decrypted with keys when SOPS-encrypted (restricted
// to the keys of the cluster's spec.decryption). Errors name the file,
// the key type and what is missing, never a value.
func FromRepository(ctx context.Context, tree fs.FS, keys *sops.Keyring, c *spec.Cluster) ([]byte, error) {
	ref := c.Spec.Kubeconfig.SecretRef
	for _, file := range c.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		secret, err := findSecret(ctx, tree, keys, c.Spec.Decryption, file, ref.Namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		if secret != nil {
			b, err := FromSecret(secret, ref.Key)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("%w: no Secret %s/%s in %s/%s/",
		ErrNotFound, ref.Namespace, ref.Name, spec.ClustersDir, c.Metadata.Name)
}

// findSecret returns the Secret namespace/name among the documents of
// file, or nil.
func findSecret(ctx context.Context, tree fs.FS, keys *sops.Keyring, allowed *spec.Decryption, file, namespace, name string) (map[string]any, error) {
	data, err := fs.ReadFile(tree, file)
	if err != nil {
		return nil, err
	}
	if sops.IsEncrypted(data) {
		if keys == nil {
			return nil, fmt.Errorf("%s is SOPS-encrypted and no SOPS keys are configured (--sops-age-key-file)", file)
		}
		if data, err = keys.Decrypt(ctx, file, data, allowed); err != nil {
			return nil, err
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: not valid YAML", file)
		}
		if isSecretNamed(doc, namespace, name) {
			return doc, nil
		}
	}
}

func isSecretNamed(doc map[string]any, namespace, name string) bool {
	meta, _ := doc["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	n, _ := meta["name"].(string)
	return doc["kind"] == "Secret" && n == name && (ns == namespace || ns == "")
}
