package testenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
)

// apiserverArgs returns the command line of the cluster's kube-apiserver.
func (c *Cluster) apiserverArgs(port int) []string {
	args := []string{
		"--etcd-servers=" + c.etcd.url,
		"--etcd-prefix=" + c.etcdPrefix,
		"--secure-port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// A loopback advertise address needs this; no Pods run anyway.
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(c.dir, "certs"),
		"--tls-cert-file=" + c.files.servingCert,
		"--tls-private-key-file=" + c.files.servingKey,
		"--token-auth-file=" + c.files.tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + c.files.saPublic,
		"--service-account-signing-key-file=" + c.files.saPrivate,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		"--profiling=false",
	}
	return append(args, c.extraFlags...)
}

// readyz asks the API server's /readyz endpoint as the admin.
func (c *Cluster) readyz(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/readyz", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.files.adminToken)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("/readyz: %s %s", resp.Status, body)
	}
	return nil
}

// httpClient trusts the cluster's CA.
func (c *Cluster) httpClient() *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.files.caPEM)
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		DisableKeepAlives: true,
	}}
}
