package reconciler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/events"
	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// Event profiles
//
// A profile with an eventTrigger renders one instance per matching
// resource (or one for all the resources of a source cluster) and applies
// all its instances as one apply request: the pair's inventory holds every
// instance's objects, so an instance whose resource went away or stopped
// matching is pruned like any object a revision dropped, and the pair is
// withdrawn as any other when the profile stops selecting the cluster. A
// change of the watched resources queues only the destination clusters.

// knownLabels are a cluster's effective labels by its last classification.
func (r *Reconciler) knownLabels(c *spec.Cluster) map[string]string {
	r.mu.Lock()
	k := r.known[c.Metadata.Name]
	r.mu.Unlock()
	labels, _ := plan.EffectiveLabels(c.Metadata.Labels, sortedClassified(k.classified))
	return labels
}

// eventRender is an event profile rendered for one cluster: the merged
// result of every instance, and the instances for the status.
type eventRender struct {
	res       *render.Result
	instances []status.EventInstance
}

// renderEvents renders every instance of an event profile for the
// cluster. Any failure (a source cluster unreachable, a script error, a
// render error, too many instances, two instances making one object)
// returns an error, and nothing of the pair changes.
func (p *clusterPass) renderEvents(ctx context.Context, rev *revision, prof *spec.Profile) (eventRender, error) {
	t := prof.Spec.EventTrigger
	src := rev.repo.EventSource(t.EventSourceName)
	matches, err := p.eventMatches(ctx, prof, src)
	if err != nil {
		return eventRender{}, err
	}
	insts := events.Instances(t.OneForEvent, matches)
	if len(insts) > t.Cap() {
		return eventRender{}, fmt.Errorf("%d event instances exceed the cap of %d (spec.eventTrigger.maxInstances); nothing of the pair changed", len(insts), t.Cap())
	}
	out := eventRender{res: &render.Result{Profile: prof.Metadata.Name}}
	owners := map[string]string{}
	hash := sha256.New()
	for _, in := range insts {
		res, err := p.r.opts.Renderer.Render(ctx, render.Request{FS: rev.tree, Revision: rev.sha, Profile: prof,
			Cluster: p.renderFacts(), TreeHash: treeHasher(rev.tree), Event: eventDataOf(in)})
		if err != nil {
			return eventRender{}, fmt.Errorf("event instance %s (%s on %s): %w", in.Name, in.Resource, in.SourceCluster, err)
		}
		rec, err := mergeInstance(out.res, res, in, owners)
		if err != nil {
			return eventRender{}, err
		}
		out.instances = append(out.instances, rec)
		fmt.Fprintf(hash, "%s=%s\n", in.Name, res.Hash)
	}
	out.res.Hash = "events:" + hex.EncodeToString(hash.Sum(nil))
	return out, nil
}

func eventDataOf(in events.Instance) *render.EventData {
	return &render.EventData{Name: in.Name, SourceCluster: in.SourceCluster, Resource: in.Object, Resources: in.Resources}
}

// mergeInstance adds an instance's steps to the pair's result, step by
// step (same add-on, phase and weight), and refuses an object another
// instance already made.
func mergeInstance(dst, res *render.Result, in events.Instance, owners map[string]string) (status.EventInstance, error) {
	rec := status.EventInstance{
		Name:          in.Name,
		SourceCluster: in.SourceCluster,
		Resource:      in.Resource,
		Event:         status.NewEventRecord(in.Object, in.Resources, res.Hash),
	}
	for _, st := range res.Steps {
		i := stepIndex(dst, st)
		for _, o := range st.Objects {
			ref := apply.RefOf(o.Unstructured).String()
			if prev, ok := owners[ref]; ok {
				return rec, fmt.Errorf("event instances %s and %s both render %s: name objects with {{ .Event.Name }}", prev, in.Name, ref)
			}
			owners[ref] = in.Name
			rec.Objects = append(rec.Objects, ref)
			dst.Steps[i].Objects = append(dst.Steps[i].Objects, o)
		}
	}
	return rec, nil
}

func stepIndex(dst *render.Result, st render.Step) int {
	for i, s := range dst.Steps {
		if s.Addon == st.Addon && s.Phase == st.Phase && s.Weight == st.Weight {
			return i
		}
	}
	st.Objects = nil
	dst.Steps = append(dst.Steps, st)
	return len(dst.Steps) - 1
}

// eventMatches reads the matching resources of every source cluster of
// the pair: the cluster itself, or, for a cross-cluster profile, every
// cluster its source selector selects by their last known labels. A
// tenant's profile reads only the clusters, namespaces and kinds its
// tenant was granted: a source cluster outside the grant fails the pair
// before anything is read.
func (p *clusterPass) eventMatches(ctx context.Context, prof *spec.Profile, src *spec.EventSource) ([]events.Matches, error) {
	sources, err := prof.EventSourceClusters(p.spec, p.rev.repo.Clusters, p.labelsOf)
	if err != nil {
		return nil, &render.Error{File: prof.Source.File, Line: prof.Source.LineOf(sourceField(err)), Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, p.r.opts.ClusterTimeout)
	defer cancel()
	out := make([]events.Matches, 0, len(sources))
	for _, c := range sources {
		cl, err := p.sourceClient(cctx, c)
		if err != nil {
			return nil, fmt.Errorf("source cluster %s: %w", c.Metadata.Name, err)
		}
		objs, err := p.r.events.MatchingIn(cctx, c.Metadata.Name, c.Spec.Namespaces, cl, src, prof.Tenant())
		if err != nil {
			return nil, fmt.Errorf("source cluster %s: event source %s: %w", c.Metadata.Name, src.Metadata.Name, err)
		}
		out = append(out, events.Matches{Cluster: c.Metadata.Name, Objects: objs})
	}
	return out, nil
}

func sourceField(err error) string {
	var ue *spec.UngrantedSourcesError
	if errors.As(err, &ue) {
		return ue.Field
	}
	return ""
}

func (p *clusterPass) labelsOf(c *spec.Cluster) map[string]string {
	if c == p.spec {
		return p.st.Labels
	}
	return p.r.knownLabels(c)
}

// sourceClient is the client of a source cluster: this pass's, or the
// apply Manager's for another cluster (shared with its own reconciliation
// and drift detection).
func (p *clusterPass) sourceClient(ctx context.Context, c *spec.Cluster) (*apply.Client, error) {
	if c == p.spec {
		return p.cl.Client(), nil
	}
	cl, err := p.r.clusterFor(ctx, p.rev.tree, c)
	if err != nil {
		return nil, err
	}
	return cl.Client(), nil
}
