package apply

import (
	"fmt"

	"k8s.io/client-go/rest"
)

// As returns a client of the same cluster that impersonates user (such as
// system:serviceaccount:ns:name): what it writes meets the cluster's RBAC
// for that user, not regatta's. Clients are built once per user.
func (c *Client) As(user string) (*Client, error) {
	if v, ok := c.as.Load(user); ok {
		return v.(*Client), nil
	}
	if c.base == nil {
		return nil, fmt.Errorf("cluster %s: cannot impersonate %s: client has no REST config", c.Cluster, user)
	}
	cfg := rest.CopyConfig(c.base)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	ic, err := newClientForConfig(c.Cluster, cfg, c.opts, c.limiter)
	if err != nil {
		return nil, fmt.Errorf("impersonating %s: %w", user, err)
	}
	ic.Hash = c.Hash
	v, _ := c.as.LoadOrStore(user, ic)
	return v.(*Client), nil
}

// closeAll releases the idle connections of the client and of its
// impersonating clients.
func (c *Client) closeAll() {
	if c == nil {
		return
	}
	c.as.Range(func(_, v any) bool {
		v.(*Client).close()
		return true
	})
	c.close()
}

// impersonate makes the pass write, and dry-run, as the request's user,
// if any.
func (p *pass) impersonate() error {
	if p.req.Impersonate == "" {
		return nil
	}
	w, err := p.cl.As(p.req.Impersonate)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", p.c.name, err)
	}
	p.writer, p.rm = w, resourceManager(w.Kube, p.c.m.opts.Concurrency)
	return nil
}
