package testenv

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
)

// tokenWebhookFlags writes a kubeconfig naming the TokenReview webhook at
// url (with ca, PEM, for an https URL) into the cluster's folder and returns
// the flags that make the API server ask it about every bearer token that
// the token file does not know. Answers are not cached, so a revoked
// identity is refused from the next request on.
func (c *Cluster) tokenWebhookFlags(url string, ca []byte) ([]string, error) {
	cluster := "    server: " + url + "\n"
	if len(ca) > 0 {
		cluster += "    certificate-authority-data: " + base64.StdEncoding.EncodeToString(ca) + "\n"
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: webhook
  cluster:
%susers:
- name: apiserver
contexts:
- name: webhook
  context: {cluster: webhook, user: apiserver}
current-context: webhook
`, cluster)
	path := filepath.Join(c.dir, "token-webhook.kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"--authentication-token-webhook-config-file=" + path,
		"--authentication-token-webhook-version=v1",
		"--authentication-token-webhook-cache-ttl=0s",
	}, nil
}
