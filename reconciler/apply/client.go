package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClientOptions configures the client of each cluster.
type ClientOptions struct {
	// QPS and Burst bound the request rate to one cluster: one token
	// bucket for all its clients, impersonating ones included (QPS 0:
	// client-go's defaults, 5 and 10; below 0: no bound).
	QPS   float32
	Burst int
	// Timeout bounds each request (watches excepted): an unreachable or
	// stalled cluster fails within it.
	Timeout time.Duration
	// DialTimeout bounds establishing a connection.
	DialTimeout time.Duration
	// AllowExec accepts kubeconfigs with exec credential plugins,
	// auth-provider entries or host file references.
	AllowExec bool
	// UserAgent identifies regatta to API servers.
	UserAgent string
	// WrapTransport, when set, wraps every cluster's HTTP transport (tests
	// count requests with it; metrics may too).
	WrapTransport func(cluster string, rt http.RoundTripper) http.RoundTripper
	// Mappers shares REST mappers between clusters whose discovery is the
	// same (see MapperCache); nil: each client has its own. A ClientCache
	// sets one for its clients.
	Mappers *MapperCache
}

// DefaultClientOptions returns QPS 300, burst 600 (per cluster), a 30 s
// request timeout and a 10 s dial timeout.
func DefaultClientOptions() ClientOptions {
	return ClientOptions{QPS: 300, Burst: 600, Timeout: 30 * time.Second,
		DialTimeout: 10 * time.Second, UserAgent: "regatta"}
}

// Client reaches one cluster.
type Client struct {
	Cluster string
	// Hash is the SHA-256 of the kubeconfig the client was built from.
	Hash   string
	Kube   client.Client
	Mapper meta.RESTMapper
	// watches lists and watches without request timeout (listWatch).
	watches *watchClients
	// Dynamic and Discovery share the connections of the others, with
	// the request timeout (classification reads with them).
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	http      *http.Client
	// informers are the shared watches of the cluster (see Informers).
	informers *Informers
	// base and opts rebuild the client under another identity (As), with
	// the same limiter.
	base    *rest.Config
	opts    ClientOptions
	limiter flowcontrol.RateLimiter
	// identity caches Identity.
	identity identity
	as       sync.Map // user name -> *Client
}

// NewClient builds a client from kubeconfig bytes, refusing credential
// plugins unless opts.AllowExec.
func NewClient(cluster string, kubeconfig []byte, opts ClientOptions) (*Client, error) {
	if err := loadKubeconfig(cluster, kubeconfig, opts.AllowExec); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, &KubeconfigError{Cluster: cluster, Reason: "kubeconfig cannot be used", Err: err}
	}
	c, err := NewClientForConfig(cluster, cfg, opts)
	if err != nil {
		return nil, err
	}
	c.Hash = hashKubeconfig(kubeconfig)
	return c, nil
}

// NewClientForConfig builds a client from a REST config (in-cluster, tests).
// The config is copied; its rate limits and timeouts are replaced by opts.
func NewClientForConfig(cluster string, in *rest.Config, opts ClientOptions) (*Client, error) {
	return newClientForConfig(cluster, in, opts, newLimiter(opts))
}

// newLimiter is the token bucket of one cluster's clients (nil: none).
// client-go gives each REST client a bucket of its own when the config has
// none, and a cluster's client holds several (the typed client one per
// resource), which multiplied the rate opts allow.
func newLimiter(opts ClientOptions) flowcontrol.RateLimiter {
	qps, burst := opts.QPS, opts.Burst
	switch {
	case qps < 0:
		return nil
	case qps == 0:
		qps, burst = rest.DefaultQPS, rest.DefaultBurst
	}
	return flowcontrol.NewTokenBucketRateLimiter(qps, max(burst, 1))
}

func newClientForConfig(cluster string, in *rest.Config, opts ClientOptions, limiter flowcontrol.RateLimiter) (*Client, error) {
	cfg := configure(cluster, in, opts, limiter)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: http client: %w", cluster, err)
	}
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: discovery client: %w", cluster, err)
	}
	mapper := newClusterMapper(disco, opts.Mappers)
	kube, err := client.New(cfg, client.Options{HTTPClient: httpClient, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: client: %w", cluster, err)
	}
	watches := newWatchClients(cluster, cfg, httpClient.Transport)
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: dynamic client: %w", cluster, err)
	}
	return &Client{
		Cluster:   cluster,
		Kube:      kube,
		Mapper:    mapper,
		watches:   watches,
		Dynamic:   dyn,
		Discovery: disco,
		http:      httpClient,
		informers: newInformers(watches),
		base:      in,
		opts:      opts,
		limiter:   limiter,
	}, nil
}

// watchClients are a client's clients for lists and watches without
// request timeout, over the client's connections. They are built on first
// use: a cluster whose profiles never wait on a watch (drift checked at
// intervals, health read at once) never builds them, and keeps two REST
// clients less.
type watchClients struct {
	once  sync.Once
	build func() (dynamic.Interface, rest.Interface, error)
	list  dynamic.Interface
	raw   rest.Interface
	err   error
}

func newWatchClients(cluster string, cfg *rest.Config, rt http.RoundTripper) *watchClients {
	return &watchClients{build: func() (dynamic.Interface, rest.Interface, error) {
		watchCfg := rest.CopyConfig(cfg)
		watchCfg.Timeout = 0
		list, err := dynamic.NewForConfigAndClient(watchCfg, &http.Client{Transport: rt})
		if err != nil {
			return nil, nil, fmt.Errorf("cluster %s: watch client: %w", cluster, err)
		}
		raw, err := rest.UnversionedRESTClientForConfigAndClient(dynamic.ConfigFor(watchCfg), &http.Client{Transport: rt})
		if err != nil {
			return nil, nil, fmt.Errorf("cluster %s: watch client: %w", cluster, err)
		}
		return list, raw, nil
	}}
}

// get returns the clients, built by the first call.
func (w *watchClients) get() (dynamic.Interface, rest.Interface, error) {
	if w == nil {
		return nil, nil, errNoWatchClient
	}
	w.once.Do(func() {
		w.list, w.raw, w.err = w.build()
		w.build = nil
	})
	return w.list, w.raw, w.err
}

var errNoWatchClient = errors.New("the client has no watch connection")

func configure(cluster string, in *rest.Config, opts ClientOptions, limiter flowcontrol.RateLimiter) *rest.Config {
	cfg := rest.CopyConfig(in)
	cfg.QPS, cfg.Burst, cfg.Timeout, cfg.RateLimiter = opts.QPS, opts.Burst, opts.Timeout, limiter
	if opts.UserAgent != "" {
		cfg.UserAgent = opts.UserAgent
	}
	if opts.DialTimeout > 0 {
		dialer := &net.Dialer{Timeout: opts.DialTimeout, KeepAlive: 30 * time.Second}
		cfg.Dial = dialer.DialContext
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return newConnGate(rt) })
	if wrap := opts.WrapTransport; wrap != nil {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return wrap(cluster, rt) })
	}
	return cfg
}

// close releases idle connections of a client that was replaced.
func (c *Client) close() {
	if c != nil && c.http != nil {
		utilnet.CloseIdleConnectionsFor(c.http.Transport)
	}
}

func hashKubeconfig(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ClientCache keeps one client per cluster, keyed by name and kubeconfig
// hash: a changed kubeconfig replaces the cached client.
type ClientCache struct {
	opts    ClientOptions
	mu      sync.Mutex
	clients map[string]*Client
}

// NewClientCache returns an empty cache whose clients use opts.
func NewClientCache(opts ClientOptions) *ClientCache {
	if opts.Mappers == nil {
		opts.Mappers = NewMapperCache()
	}
	return &ClientCache{opts: opts, clients: map[string]*Client{}}
}

// Get returns the cluster's client, building a new one when there is none
// or the kubeconfig changed; replaced reports the latter.
func (cc *ClientCache) Get(cluster string, kubeconfig []byte) (c *Client, replaced bool, err error) {
	return cc.get(cluster, hashKubeconfig(kubeconfig), func() (*Client, error) {
		return NewClient(cluster, kubeconfig, cc.opts)
	})
}

// GetConfig is Get for a REST config (a cloud cluster's, whose token
// renews itself) identified by key: a changed key replaces the client.
func (cc *ClientCache) GetConfig(cluster string, cfg *rest.Config, key string) (c *Client, replaced bool, err error) {
	return cc.get(cluster, "config:"+key, func() (*Client, error) {
		c, err := NewClientForConfig(cluster, cfg, cc.opts)
		if c != nil {
			c.Hash = "config:" + key
		}
		return c, err
	})
}

func (cc *ClientCache) get(cluster, hash string, build func() (*Client, error)) (c *Client, replaced bool, err error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	old := cc.clients[cluster]
	if old != nil && old.Hash == hash {
		return old, false, nil
	}
	c, err = build()
	if err != nil {
		return nil, false, err
	}
	old.closeAll()
	cc.clients[cluster] = c
	return c, old != nil, nil
}

// Delete forgets a cluster's client.
func (cc *ClientCache) Delete(cluster string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.clients[cluster].closeAll()
	delete(cc.clients, cluster)
}

// Informers returns the client's shared informers: drift detection and
// event watches acquire theirs there.
func (c *Client) Informers() *Informers { return c.informers }
