package apply_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regatta-dev/regatta/reconciler/apply"
)

// connCounter is a TCP proxy in front of an API server that counts the
// connections clients open through it.
type connCounter struct {
	addr  string
	conns atomic.Int32
}

func countConnections(t *testing.T, target string) *connCounter {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	c := &connCounter{addr: l.Addr().String()}
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			go func() {
				defer in.Close()
				out, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer out.Close()
				go func() { _, _ = io.Copy(out, in); out.Close() }()
				_, _ = io.Copy(in, out)
			}()
		}
	}()
	return c
}

// A burst of requests on a new client opens one connection to the API
// server, not one per request (see connGate).
func TestBurstOnANewClientOpensOneConnection(t *testing.T) {
	b, proxy := proxiedKubeconfig(t)
	c, err := apply.NewClient("burst", b, apply.DefaultClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	namespaces := c.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			if _, err := namespaces.Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := proxy.conns.Load(); n != 1 {
		t.Fatalf("40 requests on a new client opened %d connections, want 1", n)
	}
}

// proxiedKubeconfig is the main test cluster's kubeconfig through a
// connection-counting proxy.
func proxiedKubeconfig(t *testing.T) ([]byte, *connCounter) {
	t.Helper()
	kc, err := clientcmd.Load(env.Cluster(mainCluster).Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	var proxy *connCounter
	for _, cl := range kc.Clusters {
		u, err := url.Parse(cl.Server)
		if err != nil {
			t.Fatal(err)
		}
		proxy = countConnections(t, u.Host)
		u.Host = proxy.addr // same IP: the serving certificate still matches
		cl.Server = u.String()
	}
	b, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return b, proxy
}

// Without drift watches, the end of a pass closes the cluster's idle
// connection (the next request dials again); with them, the connection
// stays for the watches.
func TestEndPassClosesIdleConnectionsWithoutDriftWatches(t *testing.T) {
	for _, intervalOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("intervalOnly=%v", intervalOnly), func(t *testing.T) {
			kc, proxy := proxiedKubeconfig(t)
			opts := testOptions()
			opts.DriftIntervalOnly = intervalOnly
			c, err := newManager(t, opts).Cluster("endpass", kc)
			if err != nil {
				t.Fatal(err)
			}
			namespaces := c.Client().Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
			get := func() {
				if _, err := namespaces.Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			get()
			before := proxy.conns.Load()
			get()
			c.EndPass()
			get()
			want := before
			if intervalOnly {
				want++
			}
			if n := proxy.conns.Load(); n != want {
				t.Errorf("connections %d after EndPass and a request, want %d (%d before)", n, want, before)
			}
		})
	}
}
