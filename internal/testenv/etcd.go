package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// etcd is a single-member etcd on loopback ports.
type etcd struct {
	proc *process
	url  string // client URL
}

// startEtcd starts etcd with its data and log in dir, retrying with other
// ports if the chosen ones were taken in the meantime.
func startEtcd(ctx context.Context, binary, dir string, p *ports, timeout time.Duration) (*etcd, error) {
	var err error
	for range 3 {
		var e *etcd
		if e, err = startEtcdOnce(ctx, binary, dir, p, timeout); err == nil {
			return e, nil
		}
		if !isAddrInUse(err) {
			break
		}
	}
	return nil, fmt.Errorf("start etcd in %s: %w", dir, err)
}

func startEtcdOnce(ctx context.Context, binary, dir string, p *ports, timeout time.Duration) (*etcd, error) {
	clientPort, err := p.free()
	if err != nil {
		return nil, err
	}
	peerPort, err := p.free()
	if err != nil {
		return nil, err
	}
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	proc, err := startProcess("etcd", filepath.Join(dir, "etcd.log"), nil, binary,
		"--name=testenv",
		"--data-dir="+filepath.Join(dir, "etcd-data"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=testenv="+peerURL,
		"--logger=zap", "--log-level=warn")
	if err != nil {
		return nil, err
	}
	e := &etcd{proc: proc, url: clientURL}
	if err := waitReady(ctx, proc, timeout, e.healthy); err != nil {
		proc.stop(5 * time.Second)
		return nil, err
	}
	return e, nil
}

// healthy asks etcd's /health endpoint.
func (e *etcd) healthy(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"true"`) {
		return fmt.Errorf("etcd /health: %s %s", resp.Status, body)
	}
	return nil
}

func (e *etcd) stop() { e.proc.stop(10 * time.Second) }
