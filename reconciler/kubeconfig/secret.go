// Package kubeconfig finds the kubeconfig of a fleet cluster: a Secret
// manifest in its folder of the fleet repository (SOPS-encrypted or not),
// or a Secret in the management cluster, in the Cluster API layout (key
// "value", or "value.yaml"). The daemon and `regatta plan --live` share it;
// the apply engine takes the bytes it returns. Errors name the file or
// Secret and the key, never a value.
package kubeconfig

import (
	"encoding/base64"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Kubeconfig Secret keys, as Cluster API writes them.
const (
	SecretKey         = "value"
	SecretFallbackKey = "value.yaml"
)

// FromSecret returns the kubeconfig held by a Secret object, given
// as an unstructured object's content or a decoded YAML map. key names the
// data key; empty means "value", then "value.yaml". stringData (plain text)
// wins over data (base64), as in the API server. Errors name the Secret and
// the key, never a value.
func FromSecret(secret map[string]any, key string) ([]byte, error) {
	u := &unstructured.Unstructured{Object: secret}
	name := fmt.Sprintf("Secret %s/%s", u.GetNamespace(), u.GetName())
	if u.GetKind() != "" && u.GetKind() != "Secret" {
		return nil, fmt.Errorf("%s: kind is %s, not Secret", name, u.GetKind())
	}
	keys := []string{key}
	if key == "" {
		keys = []string{SecretKey, SecretFallbackKey}
	}
	for _, k := range keys {
		data, found, err := secretValue(secret, k)
		if err != nil {
			return nil, fmt.Errorf("%s: key %s: %w", name, k, err)
		}
		if found {
			return data, nil
		}
	}
	return nil, fmt.Errorf("%s has no key %s in data or stringData", name, keys[0])
}

// secretValue reads one key from stringData, then data.
func secretValue(secret map[string]any, key string) ([]byte, bool, error) {
	if sd, ok := secret["stringData"].(map[string]any); ok {
		if v, ok := sd[key]; ok {
			s, ok := v.(string)
			if !ok {
				return nil, false, fmt.Errorf("stringData value is not a string")
			}
			return []byte(s), true, nil
		}
	}
	d, ok := secret["data"].(map[string]any)
	if !ok {
		return nil, false, nil
	}
	v, ok := d[key]
	if !ok {
		return nil, false, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, false, fmt.Errorf("data value is not a base64 string")
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, false, fmt.Errorf("data value is not valid base64")
	}
	return b, true, nil
}
