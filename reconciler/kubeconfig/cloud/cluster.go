package cloud

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/regatta-dev/regatta/reconciler/kubeconfig/token"
	"github.com/regatta-dev/regatta/spec"
)

// provider is a cloud's token fetcher that can also look a named
// cluster's endpoint up with the same identity.
type provider interface {
	token.Fetcher
	lookup(ctx context.Context) (Endpoint, error)
}

// Cluster reaches one cloud cluster: tokens renewed before they expire,
// sent to the endpoint cluster.yaml gives or, when it gives none, to the
// endpoint looked up from the cloud's management API. A looked-up endpoint
// is kept until a request fails as if the cluster had moved (an unknown
// CA, an address that does not resolve or refuses connections); the next
// Config looks it up again, at most once per RelookupInterval while the
// management API keeps answering the same endpoint (a cluster that is down
// or unreachable, not moved). Safe for concurrent use.
type Cluster struct {
	name string
	spec *spec.CloudCredentials
	prov provider
	src  *token.Source
	now  func() time.Time

	mu    sync.Mutex
	ep    Endpoint
	cfg   *rest.Config
	gen   int  // the generation of cfg
	stale bool // a request of cfg failed as if the cluster had moved
	// sameAt is when a look-up last answered the endpoint in use.
	sameAt time.Time
}

// RelookupInterval is the least time between two look-ups of a cluster
// whose management API answered the endpoint in use: an unreachable
// cluster costs its cloud at most one call a minute, not one per pass.
const RelookupInterval = time.Minute

// NewCluster returns the Cluster of a cloud entry; tokens are fetched
// within ctx (the daemon's lifetime). Nothing is fetched yet.
func NewCluster(ctx context.Context, name string, c *spec.CloudCredentials, opts Options) (*Cluster, error) {
	opts = opts.withDefaults()
	p, err := newProvider(name, c, opts)
	if err != nil {
		return nil, err
	}
	cl := &Cluster{name: name, spec: c, prov: p, src: token.NewSource(ctx, p, nil), now: opts.Now}
	if !c.LooksUp() {
		cl.build(Endpoint{Server: c.Server, CAData: c.CAData()})
	}
	return cl, nil
}

// Config returns the REST config of the cluster and the endpoint it
// reaches, looking the endpoint up when there is none yet or the last one
// seems to have moved. A failed look-up is a *LookupError (or an *Error
// when no token for the management API can be had).
func (cl *Cluster) Config(ctx context.Context) (*rest.Config, Endpoint, error) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.cfg != nil && (!cl.stale || cl.now().Sub(cl.sameAt) < RelookupInterval) {
		return cl.cfg, cl.ep, nil
	}
	ep, err := cl.prov.lookup(ctx)
	if err != nil {
		return nil, Endpoint{}, err
	}
	if cl.cfg == nil || ep.Server != cl.ep.Server || !bytes.Equal(ep.CAData, cl.ep.CAData) {
		cl.build(ep)
		cl.sameAt = time.Time{}
	} else {
		cl.sameAt = cl.now()
	}
	cl.stale = false
	return cl.cfg, cl.ep, nil
}

// build makes the REST config of ep; the caller holds mu (or owns cl).
// Only a looked-up endpoint is watched for moves: a given one is the
// user's to change.
func (cl *Cluster) build(ep Endpoint) {
	cl.gen++
	gen := cl.gen
	cl.ep, cl.cfg = ep, token.Config(ep.Server, ep.CAData, cl.src)
	if cl.spec.LooksUp() {
		cl.cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return &movedWatch{rt: rt, moved: func() { cl.moved(gen) }}
		})
	}
}

// moved marks the endpoint of generation gen as stale, unless it has been
// replaced since.
func (cl *Cluster) moved(gen int) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if gen == cl.gen {
		cl.stale = true
	}
}
