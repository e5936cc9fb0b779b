package reconciler

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// One entry per cluster
//
// Before anything is listed, applied, pruned or withdrawn, a pass makes
// sure its entry is the one of the repository that manages what it reaches
// (apply/identity.go says what identifies a cluster): the registration in
// the cluster names it, or names no entry of the repository and is taken
// over. When two whole-cluster entries that no registration tells apart
// reach one cluster, the first by name registers and the other is
// refused; afterwards the registration keeps the choice across passes,
// restarts and replicas, also when an entry sorting earlier is added. A
// refused entry changes nothing in the cluster and says why in its status.

// maxRegisterAttempts bounds the re-reads after a registration race.
const maxRegisterAttempts = 3

// register makes sure the entry may manage what it reaches, registering it
// where no entry of the repository is. It reports false when the pass must
// stop: the entry is refused (its status says by which entry) or the
// registration could not be read or written (unreachable).
func (p *clusterPass) register(ctx context.Context) bool {
	if !p.confirm(ctx) {
		return false
	}
	p.cl.ResumeDrift() // a client change held it until now
	return true
}

// confirm is register's check: from memory when this client was confirmed
// on this revision or on one with the same cluster entries, else from the
// cluster's registrations.
func (p *clusterPass) confirm(ctx context.Context) bool {
	if p.r.registered(p.spec.Metadata.Name, p.cl.Client(), p.rev) {
		return true
	}
	var uid string
	if !p.spec.NamespaceScoped() {
		var err error
		if uid, err = p.cl.Client().Identity(ctx); err != nil {
			p.unreachable(err)
			return false
		}
		p.r.setIdentity(p.spec.Metadata.Name, identityRecord{uid: uid})
	}
	for range maxRegisterAttempts {
		regs, err := p.cl.Registrations(ctx)
		if err != nil {
			p.unreachable(err)
			return false
		}
		holder, free := p.holder(regs)
		if holder == nil && len(free) > 0 && uid != "" {
			holder = p.earlierTwin(ctx, uid)
		}
		if holder != nil {
			p.refuse(holder, uid)
			return false
		}
		err = p.registerIn(ctx, free)
		if errors.Is(err, apply.ErrRegistrationRace) {
			continue
		}
		if err != nil {
			p.unreachable(err)
			return false
		}
		p.r.setIdentity(p.spec.Metadata.Name, identityRecord{uid: uid, registered: p.cl.Client(), rev: p.rev.sha,
			clusters: clustersTree(p.rev)})
		return true
	}
	p.unreachable(fmt.Errorf("registration keeps changing (%d attempts); another regatta of the fleet writes it", maxRegisterAttempts))
	return false
}

// holder returns the other entry of the repository a registration names,
// nil when there is none, and the registrations to take: those naming no
// entry or one the repository no longer has (a renamed folder).
func (p *clusterPass) holder(regs []apply.Registration) (holder *registered, free []apply.Registration) {
	for _, reg := range regs {
		switch {
		case reg.Entry == p.spec.Metadata.Name:
		case reg.Entry != "" && p.rev.repo.Cluster(reg.Entry) != nil:
			return &registered{entry: reg.Entry, namespace: reg.Namespace}, nil
		default:
			free = append(free, reg)
		}
	}
	return nil, free
}

// registered is the entry that manages what a refused entry reaches.
type registered struct {
	entry string
	// namespace holds its registration; twin says it was found by
	// identity, not registered yet.
	namespace string
	twin      bool
}

func (p *clusterPass) registerIn(ctx context.Context, regs []apply.Registration) error {
	for _, reg := range regs {
		if reg.Entry != "" {
			p.log.Info("taking over the registration of an entry the repository no longer has",
				"previous", reg.Entry, "namespace", reg.Namespace)
		}
		if err := p.cl.Register(ctx, reg); err != nil {
			return err
		}
	}
	return nil
}

// earlierTwin returns the whole-cluster entry sorting before this one that
// reaches the same cluster (uid), nil when there is none. Entries whose
// identity cannot be read are skipped: their own pass meets this entry's
// registration. Identities not known yet are read concurrently (at most
// twinLookups at a time), so a new entry of a large new fleet does not wait
// for each earlier one in turn.
func (p *clusterPass) earlierTwin(ctx context.Context, uid string) *registered {
	var earlier []*spec.Cluster
	for _, c := range p.rev.repo.Clusters {
		if c.Metadata.Name < p.spec.Metadata.Name && !c.NamespaceScoped() {
			earlier = append(earlier, c)
		}
	}
	ids := make([]string, len(earlier))
	var g errgroup.Group
	g.SetLimit(twinLookups)
	for i, c := range earlier {
		g.Go(func() error {
			ids[i] = p.r.identityOf(ctx, p.rev, c)
			return nil
		})
	}
	_ = g.Wait() // look-ups fail into "": an identity not known
	for i, id := range ids {
		if id == uid {
			return &registered{entry: earlier[i].Metadata.Name, twin: true}
		}
	}
	return nil
}

// twinLookups bounds the concurrent identity look-ups of earlierTwin.
const twinLookups = 8

// refuse reports an entry that reaches what another entry manages: nothing
// of it is applied, pruned or withdrawn, and its drift and event watches
// stop.
func (p *clusterPass) refuse(h *registered, uid string) {
	name := p.spec.Metadata.Name
	var msg string
	switch {
	case p.spec.NamespaceScoped():
		msg = fmt.Sprintf("namespace %s, one of cluster entry %s's spec.namespaces, is managed by cluster entry %s (registration ConfigMap %s/%s)",
			h.namespace, name, h.entry, h.namespace, apply.RegistrationName)
	default:
		msg = fmt.Sprintf("cluster entries %s and %s reach the same cluster (kube-system Namespace UID %s); %s manages it",
			h.entry, name, uid, h.entry)
	}
	msg += fmt.Sprintf(": %s is refused, nothing of it is applied, pruned or withdrawn (remove one entry, or point its kubeconfig at its own cluster)", name)
	p.log.Error("cluster entry refused", "managedBy", h.entry, "error", msg)
	p.r.opts.Apply.Forget(name)
	p.r.events.Forget(name)
	p.st.Reachable, p.st.Error = true, msg
	p.reportKnown(false, status.Profile{State: status.StateFailed, Error: &status.Error{File: p.spec.Source.File, Message: msg}})
}

// registered reports whether the entry's pass found its registration with
// this client on this revision, or on one whose cluster entries are the
// same (the clusters folder is the same Git tree): what the check reads
// from the repository is then the same, and a fleet-wide change to the
// profiles does not read every cluster's registration again.
func (r *Reconciler) registered(name string, cl *apply.Client, rev *revision) bool {
	r.mu.Lock()
	rec := r.identities[name]
	r.mu.Unlock()
	if rec.registered == nil || rec.registered != cl {
		return false
	}
	return rec.rev == rev.sha || rec.clusters != "" && rec.clusters == clustersTree(rev)
}

// clustersTree is the Git tree hash of a revision's clusters folder, ""
// when the tree cannot say.
func clustersTree(rev *revision) string {
	h, ok := treeHash(rev.tree, spec.ClustersDir)
	if !ok {
		return ""
	}
	return h
}

func (r *Reconciler) setIdentity(name string, rec identityRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.identities[name] = rec
}

// identityOf returns the cluster identity of another whole-cluster entry:
// the one its pass or an earlier look-up found, else read now through its
// credentials (as clusterFor reaches it). "" when it cannot be read (not tried again on this revision).
func (r *Reconciler) identityOf(ctx context.Context, rev *revision, c *spec.Cluster) string {
	name := c.Metadata.Name
	r.mu.Lock()
	rec, ok := r.identities[name]
	r.mu.Unlock()
	if ok && (rec.uid != "" || rec.failed == rev.sha) {
		return rec.uid
	}
	cctx, cancel := context.WithTimeout(ctx, r.opts.ClusterTimeout)
	defer cancel()
	a, err := r.opts.Credentials.Resolve(cctx, rev.tree, r.opts.Keys, r.opts.Management, c)
	var uid string
	switch {
	case err != nil:
	case a.Config != nil:
		uid, err = r.opts.Apply.IdentityFor(cctx, name, a.Config, a.Key)
	default:
		uid, err = r.opts.Apply.Identity(cctx, name, a.Kubeconfig)
	}
	if err != nil {
		r.log.Debug("identity of another entry unknown", "cluster", name, "error", err)
		r.setIdentity(name, identityRecord{failed: rev.sha})
		return ""
	}
	r.setIdentity(name, identityRecord{uid: uid})
	return uid
}

// forgetIdentities drops the identities of entries not in names.
func (r *Reconciler) forgetIdentities(names map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.identities {
		if !names[name] {
			delete(r.identities, name)
		}
	}
}
