package cloud_test

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig/cloud"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// The clouds' names of the test clusters, as cluster.yaml gives them.
const (
	gkePrefix = "projects/regatta-test/locations/europe-west1/clusters/"
	aksPrefix = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/fleet/providers/Microsoft.ContainerService/managedClusters/"
)

// named is a provider's cluster known to its management API by name:
// what cluster.yaml says, and where the stand-in's directory keeps it.
type named struct {
	creds spec.CloudCredentials
	dir   *directory
	key   string
}

// namedCluster returns the named cluster of provider p (index into
// providers) called name, in region for aws (its token names the cluster
// prod whatever the region, as the API server's webhook wants).
func namedCluster(p int, name, region string) named {
	switch providers[p].name {
	case "aws":
		return named{spec.CloudCredentials{Provider: spec.ProviderAWS, Cluster: name, Region: region}, sts.eks, region + "/" + name}
	case "gcp":
		return named{spec.CloudCredentials{Provider: spec.ProviderGCP, Cluster: gkePrefix + name}, gcp.gke, gkePrefix + name}
	}
	return named{spec.CloudCredentials{Provider: spec.ProviderAzure, Cluster: aksPrefix + name}, entra.aks, strings.ToLower(aksPrefix + name)}
}

// yaml is the cloud spec of cluster.yaml: provider and cluster (and
// region) only.
func (n named) yaml() string {
	s := fmt.Sprintf("{provider: %s, cluster: %q", n.creds.Provider, n.creds.Cluster)
	if n.creds.Region != "" {
		s += ", region: " + n.creds.Region
	}
	return s + "}"
}

// TestDaemonLooksUpNamedClusters: entries that name only the cloud's
// cluster (and, for aws, its region) are reached at the endpoint and CA
// the clouds' management APIs answer (EKS DescribeCluster signed with the
// role's credentials, GKE clusters.get and ARM managedClusters with the
// pod's tokens), looked up once and kept; an entry whose look-up the cloud
// denies fails alone, its status naming the provider, the call, the
// cluster and the permission to grant, and no credential.
func TestDaemonLooksUpNamedClusters(t *testing.T) {
	files := map[string]string{}
	var reached, denied []named
	for i, p := range providers {
		name := "prod"
		if p.name != "aws" {
			name = p.cluster
		}
		n := namedCluster(i, name, "eu-west-1")
		n.dir.Set(n.key, env.Cluster(p.cluster).URL(), env.Cluster(p.cluster).CAData())
		addEntry(files, "cloud-"+p.name, n.yaml(), "looked-up")
		reached = append(reached, n)
		d := namedCluster(i, "denied", "eu-west-1")
		d.dir.Set(d.key, env.Cluster(p.cluster).URL(), env.Cluster(p.cluster).CAData())
		d.dir.Deny(d.key)
		addEntry(files, "denied-"+p.name, d.yaml(), "never")
		denied = append(denied, d)
	}
	fleet := gitfleet.New(t)
	fleet.Commit("named clusters", files)
	d := newDaemon(t, fleet.URL)
	var snap status.Snapshot
	for range 2 { // the second pass uses what the first looked up
		res, _ := d.RunOnce(t.Context())
		snap = res.Snapshot
	}
	for i, p := range providers {
		if got := configMapValue(t, p.cluster, "cloud-"+p.name); got != "looked-up" {
			t.Errorf("%s: value %q", p.name, got)
		}
		if n := reached[i].dir.Lookups(reached[i].key); n != 1 {
			t.Errorf("%s: looked up %d times in two passes, want once", p.name, n)
		}
		st := clusterStatus(snap, "denied-"+p.name)
		if st.Reachable || st.Error == "" {
			t.Errorf("denied-%s: reachable %v, error %q", p.name, st.Reachable, st.Error)
			continue
		}
		t.Logf("denied-%s: %s", p.name, st.Error)
		for _, want := range deniedSays(p.name, denied[i].creds.Cluster) {
			if !strings.Contains(st.Error, want) {
				t.Errorf("denied-%s: error %q does not say %q", p.name, st.Error, want)
			}
		}
		for _, secret := range []string{aksUserSecret, "arm.", "ya29.", "ASIA", "aad."} {
			if strings.Contains(st.Error, secret) {
				t.Errorf("denied-%s: error %q shows a credential (%s)", p.name, st.Error, secret)
			}
		}
	}
}

// deniedSays is what the error of a denied look-up must say.
func deniedSays(provider, cluster string) []string {
	prefix := "cluster denied-" + provider + ": " + provider + ": "
	switch provider {
	case "aws":
		return []string{prefix + "eks:DescribeCluster on denied: AccessDeniedException", "grant eks:DescribeCluster"}
	case "gcp":
		return []string{prefix + "container.clusters.get on " + cluster + ": PERMISSION_DENIED", "roles/container.clusterViewer"}
	}
	return []string{prefix + "Microsoft.ContainerService/managedClusters/read on " + cluster + ": AuthorizationFailed", "Azure Kubernetes Service Cluster User Role"}
}

// TestLookupAgainWhenClusterMoved: a looked-up endpoint is kept while
// requests succeed, and looked up again after a request fails as if the
// cluster had been recreated: its address refuses connections, then its
// certificate is of another CA. Each provider then reaches the cluster at
// what its management API answers now.
func TestLookupAgainWhenClusterMoved(t *testing.T) {
	for i, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			n := namedCluster(i, "moved", "us-east-1")
			if p.name == "aws" {
				n = namedCluster(i, "prod", "us-east-1")
			}
			right := env.Cluster(p.cluster)
			other := env.Cluster(providers[(i+1)%len(providers)].cluster)
			cl, err := cloud.NewCluster(t.Context(), "moved-"+p.name, &n.creds, options())
			if err != nil {
				t.Fatal(err)
			}
			steps := []struct {
				what, server string
				ca           []byte
				fails        func(error) bool
			}{
				{"an address refusing connections", "https://" + closedAddress(t), right.CAData(), isDial},
				{"a certificate of another CA", right.URL(), other.CAData(), isX509},
				{"the cluster's endpoint and CA", right.URL(), right.CAData(), nil},
			}
			for k, step := range steps {
				n.dir.Set(n.key, step.server, step.ca)
				cs := clientOf(t, cl)
				if got := n.dir.Lookups(n.key); got != k+1 {
					t.Fatalf("%s: looked up %d times, want %d", step.what, got, k+1)
				}
				_, err := whoAmI(t.Context(), cs)
				switch {
				case step.fails == nil && err != nil:
					t.Fatalf("%s: %v", step.what, err)
				case step.fails != nil && (err == nil || !step.fails(err)):
					t.Fatalf("%s: error %v", step.what, err)
				}
				if step.fails == nil {
					clientOf(t, cl) // a success keeps the endpoint
					if got := n.dir.Lookups(n.key); got != k+1 {
						t.Fatalf("looked up again after a success: %d times", got)
					}
				}
			}
		})
	}
}

// TestLookupAtMostOncePerIntervalWhileUnreachable: a cluster that stays
// unreachable at the endpoint its management API answers is looked up
// again at most once per cloud.RelookupInterval, not at every pass; an
// answer that changes is taken at once (TestLookupAgainWhenClusterMoved).
func TestLookupAtMostOncePerIntervalWhileUnreachable(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	opts := options()
	opts.Now = clock.Now
	n := namedCluster(1, "down", "")
	n.dir.Set(n.key, "https://"+closedAddress(t), env.Cluster("gke").CAData())
	cl, err := cloud.NewCluster(t.Context(), "down-gcp", &n.creds, opts)
	if err != nil {
		t.Fatal(err)
	}
	tries := func(times int) {
		t.Helper()
		for range times {
			if _, err := whoAmI(t.Context(), clientOf(t, cl)); err == nil || !isDial(err) {
				t.Fatalf("want a dial error, got %v", err)
			}
		}
	}
	tries(1) // the first look-up, then the address refuses: stale
	tries(1) // looked up again: the same answer
	tries(5) // within the interval: no look-up
	if got := n.dir.Lookups(n.key); got != 2 {
		t.Fatalf("looked up %d times within the interval, want 2", got)
	}
	clock.Add(cloud.RelookupInterval)
	tries(3)
	if got := n.dir.Lookups(n.key); got != 3 {
		t.Fatalf("looked up %d times after the interval, want 3", got)
	}
}

// TestLookupGKEPrivateEndpoint: a GKE cluster whose clusters.get answer
// names only its private endpoint (no public one) is reached there.
func TestLookupGKEPrivateEndpoint(t *testing.T) {
	n := namedCluster(1, "private", "")
	right := env.Cluster("gke")
	n.dir.SetPrivate(n.key, right.URL(), right.CAData())
	cl, err := cloud.NewCluster(t.Context(), "private-gcp", &n.creds, options())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := whoAmI(t.Context(), clientOf(t, cl)); err != nil {
		t.Fatal(err)
	}
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// clientOf returns a client of the cluster's current REST config.
func clientOf(t *testing.T, cl *cloud.Cluster) kubernetes.Interface {
	t.Helper()
	cfg, _, err := cl.Config(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 10 * time.Second
	return kubernetes.NewForConfigOrDie(cfg)
}

// closedAddress returns a loopback address nothing listens on.
func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func isDial(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func isX509(err error) bool {
	var v *tls.CertificateVerificationError
	return errors.As(err, &v)
}

// TestDaemonReachesRecreatedCluster: the daemon's pass fails while the
// management API answers a CA the API server's certificate is not of (the
// cluster was recreated after the look-up); once it answers the new CA,
// the next pass looks the cluster up again, builds a new client and
// applies.
func TestDaemonReachesRecreatedCluster(t *testing.T) {
	gke := env.Cluster("gke")
	n := namedCluster(1, "recreated", "")
	n.dir.Set(n.key, gke.URL(), env.Cluster("eks").CAData())
	files := map[string]string{}
	addEntry(files, "cloud-gcp", n.yaml(), "recreated")
	fleet := gitfleet.New(t)
	fleet.Commit("recreated", files)
	d := newDaemon(t, fleet.URL)
	res, _ := d.RunOnce(t.Context())
	if st := clusterStatus(res.Snapshot, "cloud-gcp"); st.Reachable || !strings.Contains(st.Error, "x509") {
		t.Fatalf("with the old CA: reachable %v, error %q", st.Reachable, st.Error)
	}
	n.dir.Set(n.key, gke.URL(), gke.CAData())
	res, _ = d.RunOnce(t.Context())
	if st := clusterStatus(res.Snapshot, "cloud-gcp"); !st.Reachable || st.Error != "" {
		t.Fatalf("with the new CA: reachable %v, error %q", st.Reachable, st.Error)
	}
	if got := configMapValue(t, "gke", "cloud-gcp"); got != "recreated" {
		t.Fatalf("value %q", got)
	}
	if got := n.dir.Lookups(n.key); got != 2 {
		t.Fatalf("looked up %d times, want twice", got)
	}
}
