package apply_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

func kubeconfigWith(t *testing.T, server string, auth *clientcmdapi.AuthInfo) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["u"] = auth
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Kubeconfigs that would run a program or read a host file are refused
// unless AllowExec; the error says how to allow them.
func TestKubeconfigExecRefused(t *testing.T) {
	cases := map[string]struct {
		auth *clientcmdapi.AuthInfo
		want string
	}{
		"exec": {&clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "/usr/local/bin/aws",
			APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}},
			"cluster prod-eu-1: kubeconfig uses an exec credential plugin (aws); start regatta with --allow-kubeconfig-exec to allow it"},
		"auth-provider": {&clientcmdapi.AuthInfo{AuthProvider: &clientcmdapi.AuthProviderConfig{Name: "gcp"}},
			"cluster prod-eu-1: kubeconfig uses an auth-provider (gcp); start regatta with --allow-kubeconfig-exec to allow it"},
		"tokenFile": {&clientcmdapi.AuthInfo{TokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token"},
			"cluster prod-eu-1: kubeconfig uses a token file on the daemon's host (tokenFile); start regatta with --allow-kubeconfig-exec to allow it"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kc := kubeconfigWith(t, "https://127.0.0.1:1", tc.auth)
			_, err := newManager(t, testOptions()).Cluster("prod-eu-1", kc)
			if err == nil || err.Error() != tc.want || !errors.Is(err, apply.ErrExecNotAllowed) {
				t.Fatalf("error %v\nwant   %s", err, tc.want)
			}
			opts := testOptions()
			opts.Client.AllowExec = true
			// Allowed, it may still fail here (no gcp plugin, no token file), but not as refused.
			if _, err := newManager(t, opts).Cluster("prod-eu-1", kc); errors.Is(err, apply.ErrExecNotAllowed) {
				t.Errorf("AllowExec: %v", err)
			}
		})
	}
}

// A kubeconfig error never quotes the credential.
func TestKubeconfigErrorsHideCredentials(t *testing.T) {
	kc := kubeconfigWith(t, "https://127.0.0.1:1", &clientcmdapi.AuthInfo{Token: "sup3r-s3cret-t0ken"})
	kc = append(kc, []byte("\n:::not yaml")...)
	_, err := newManager(t, testOptions()).Cluster("c1", kc)
	if err == nil || strings.Contains(err.Error(), "sup3r") {
		t.Fatalf("error %v", err)
	}
}

// A changed kubeconfig replaces the cached client; the same one keeps it.
func TestClientCacheReplacesOnChange(t *testing.T) {
	cc := apply.NewClientCache(apply.DefaultClientOptions())
	kc := env.Cluster(mainCluster).Kubeconfig()
	a, _, err := cc.Get(mainCluster, kc)
	if err != nil {
		t.Fatal(err)
	}
	b, replaced, _ := cc.Get(mainCluster, kc)
	if a != b || replaced {
		t.Error("same kubeconfig built a new client")
	}
	c, replaced, _ := cc.Get(mainCluster, append(kc, '\n'))
	if c == a || !replaced {
		t.Error("changed kubeconfig kept the old client")
	}
}

// A stopped cluster fails fast as unreachable and converges once restarted;
// a cluster that accepts connections but never answers fails within the
// per-cluster timeout.
func TestUnreachableCluster(t *testing.T) {
	ns := "unreach"
	opts := testOptions()
	opts.Client.Timeout = 2 * time.Second
	m := newManager(t, opts)
	c := target(t, m, stopCluster)
	req := apply.Request{Profile: "unreach", RenderHash: "h1", Steps: []apply.Step{step("a", namespace(ns), configMap(ns, "cm", nil))}}
	mustApplied(t, c.Apply(t.Context(), req))

	env.Cluster(stopCluster).Stop()
	req.RenderHash = "h2"
	start := time.Now()
	res := c.Apply(t.Context(), req)
	var ue *apply.UnreachableError
	if res.State != apply.StateFailed || !errors.As(res.Err, &ue) || time.Since(start) > 3*time.Second {
		t.Fatalf("stopped cluster after %s: %s", time.Since(start), res)
	}
	t.Logf("stopped cluster reported in %s: %s", time.Since(start).Round(time.Millisecond), res.Error)
	if err := env.Cluster(stopCluster).Start(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	mustApplied(t, c.Apply(t.Context(), req))

	t.Run("hanging", func(t *testing.T) { testHangingCluster(t, m) })
}

func testHangingCluster(t *testing.T, m *apply.Manager) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { // accept and hold connections, never answer
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { <-ctx.Done(); conn.Close() }()
		}
	}()
	defer ln.Close()
	c, err := m.Cluster("hanging", kubeconfigWith(t, "https://"+ln.Addr().String(), &clientcmdapi.AuthInfo{Token: "t"}))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := c.Apply(t.Context(), apply.Request{Profile: "hang", RenderHash: "h", Steps: []apply.Step{step("a", namespace("x"))}})
	var ue *apply.UnreachableError
	if !errors.As(res.Err, &ue) || time.Since(start) > 5*time.Second {
		t.Fatalf("hanging cluster after %s: %s", time.Since(start), res)
	}
	t.Logf("hanging cluster reported in %s: %s", time.Since(start).Round(time.Millisecond), res.Error)
}
