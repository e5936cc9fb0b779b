package reconciler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	yaml "go.yaml.in/yaml/v3"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// SecretGetter reads a Secret from the management cluster (nil when regatta
// runs without one). It returns the Secret as an unstructured object.
type SecretGetter func(ctx context.Context, namespace, name string) (map[string]any, error)

// errNoKubeconfig is returned when neither the cluster folder nor the
// management cluster holds the kubeconfig Secret.
var errNoKubeconfig = errors.New("kubeconfig Secret not found")

// kubeconfig finds the cluster's kubeconfig: a Secret manifest in its
// folder (decrypted with SOPS when encrypted), else a Secret in the
// management cluster. It is read anew on every pass: tokens rotate.
func kubeconfig(ctx context.Context, tree fs.FS, keys *sops.Keyring, mgmt SecretGetter, c *spec.Cluster) ([]byte, error) {
	ref := c.Spec.Kubeconfig.SecretRef
	var recipients []string
	if c.Spec.Decryption != nil {
		recipients = c.Spec.Decryption.AgeRecipients
	}
	for _, file := range c.Files {
		secret, err := findSecret(tree, keys, recipients, file, ref.Namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		if secret != nil {
			b, err := apply.KubeconfigFromSecret(secret, ref.Key)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			return b, nil
		}
	}
	if mgmt == nil {
		return nil, fmt.Errorf("%w: no Secret %s/%s in %s/%s/ and no management cluster (--management-kubeconfig)",
			errNoKubeconfig, ref.Namespace, ref.Name, spec.ClustersDir, c.Metadata.Name)
	}
	secret, err := mgmt(ctx, ref.Namespace, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("management cluster: Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return apply.KubeconfigFromSecret(secret, ref.Key)
}

// findSecret returns the Secret named namespace/name among the documents of
// file, or nil. Decryption errors name the file and never its content.
func findSecret(tree fs.FS, keys *sops.Keyring, recipients []string, file, namespace, name string) (map[string]any, error) {
	data, err := fs.ReadFile(tree, file)
	if err != nil {
		return nil, err
	}
	if sops.IsEncrypted(data) {
		if keys == nil {
			return nil, fmt.Errorf("%s is SOPS-encrypted and no age key is configured (--sops-age-key-file)", file)
		}
		if data, err = keys.Decrypt(file, data, recipients); err != nil {
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
		if isSecret(doc, namespace, name) {
			return doc, nil
		}
	}
}

func isSecret(doc map[string]any, namespace, name string) bool {
	meta, _ := doc["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	n, _ := meta["name"].(string)
	return doc["kind"] == "Secret" && n == name && (ns == namespace || ns == "")
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
