package testenv

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// stopGrace is how long a process may take to exit after SIGTERM.
const stopGrace = 10 * time.Second

// Cluster is one kube-apiserver with its credentials and etcd storage.
// Its methods are safe for concurrent use.
type Cluster struct {
	name        string
	dir         string
	files       *clusterFiles
	bins        binaries
	ports       *ports
	etcd        *etcd // its own or the environment's shared one
	etcdPrefix  string
	extraFlags  []string
	env         []string // added to the API server's environment
	timeout     time.Duration
	logf        func(format string, args ...any)
	controllers *Controllers // nil: a bare API server

	mu      sync.Mutex
	port    int
	version string        // exact version of the last start
	proc    *process      // nil when stopped
	cp      *controlPlane // nil when stopped or bare
}

// Name returns the cluster's name.
func (c *Cluster) Name() string { return c.name }

// URL returns the API server's address, e.g. https://127.0.0.1:34567. It
// stays the same across restarts unless the port was taken meanwhile.
func (c *Cluster) URL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.url()
}

func (c *Cluster) url() string { return "https://127.0.0.1:" + strconv.Itoa(c.port) }

// Version returns the exact Kubernetes version of the last start, e.g. v1.36.3.
func (c *Cluster) Version() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// Running reports whether the API server process is alive.
func (c *Cluster) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proc != nil && !c.proc.exited()
}

// RSS returns the resident memory of the API server process in bytes.
func (c *Cluster) RSS() (int64, error) {
	pid, err := c.Pid()
	if err != nil {
		return 0, err
	}
	return rssBytes(pid)
}

// Pid returns the process id of the cluster's API server.
func (c *Cluster) Pid() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return 0, fmt.Errorf("cluster %s is stopped", c.name)
	}
	return c.proc.pid(), nil
}

// Start starts the API server, with the given version ("v1.36.3", "v1.36",
// or "" for the version of the previous start), and waits until /readyz
// answers ok; with Controllers it then starts the controllers, scheduler and
// kwok and waits for them too. The cluster keeps its etcd data, credentials
// and, normally, its port: objects persist and kubeconfigs stay valid.
func (c *Cluster) Start(ctx context.Context, version string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil && !c.proc.exited() {
		return fmt.Errorf("start cluster %s: already running", c.name)
	}
	if version == "" {
		version = c.version
	}
	path, exact, err := c.bins.apiserver(version)
	if err != nil {
		return fmt.Errorf("start cluster %s: %w", c.name, err)
	}
	begin := time.Now()
	if err := c.startWithRetry(ctx, path); err != nil {
		return fmt.Errorf("start kube-apiserver %s for cluster %s: %w", exact, c.name, err)
	}
	c.version = exact
	if c.controllers != nil {
		cp, err := c.startControlPlane(ctx)
		if err != nil {
			c.proc.stop(stopGrace)
			c.proc = nil
			return fmt.Errorf("start the controllers of cluster %s: %w", c.name, err)
		}
		c.cp = cp
	}
	c.logf("testenv: cluster %s (%s) ready at %s in %s%s", c.name, exact, c.url(),
		time.Since(begin).Round(time.Millisecond), c.controllersNote())
	return nil
}

func (c *Cluster) controllersNote() string {
	if c.controllers == nil {
		return ""
	}
	return fmt.Sprintf(" with controllers and %d kwok nodes", c.controllers.Nodes)
}

// startWithRetry starts the API server, moving to another port when its port
// was taken by someone else in the meantime.
func (c *Cluster) startWithRetry(ctx context.Context, path string) error {
	var err error
	for range 3 {
		if err = c.startOnce(ctx, path); !errors.Is(err, errAddrInUse) {
			return err
		}
		if c.port, err = c.ports.free(); err != nil {
			return err
		}
	}
	return err
}

func (c *Cluster) startOnce(ctx context.Context, path string) error {
	logPath := filepath.Join(c.dir, "kube-apiserver.log")
	proc, err := startProcess("kube-apiserver", logPath, c.env, path, c.apiserverArgs(c.port)...)
	if err != nil {
		return err
	}
	client := c.httpClient()
	url := c.url()
	probe := func(ctx context.Context) error { return c.readyz(ctx, client, url) }
	if err := waitReady(ctx, proc, c.timeout, probe); err != nil {
		proc.stop(stopGrace)
		return err
	}
	c.proc = proc
	return nil
}

// Stop stops the controllers, scheduler and kwok if any, then the API
// server (SIGTERM, then SIGKILL), and waits for them to exit. Its etcd data
// stays, so Start brings the same cluster back.
func (c *Cluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cp != nil {
		c.cp.stop()
		c.cp = nil
	}
	if c.proc == nil {
		return
	}
	c.proc.stop(stopGrace)
	c.proc = nil
}
