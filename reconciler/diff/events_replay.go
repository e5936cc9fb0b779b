package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/reconciler/tenancy"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// Event instances replayed from the status branch
//
// The status branch records, per event instance, the resource its
// templates saw (reduced: see status.NewEventRecord). For a pair whose
// event profile changes, plan renders every recorded instance at base and
// at head from that record and reports per instance the objects created,
// updated and deleted. It does not evaluate the event source again: which
// resources a changed selection would take or drop is known only on the
// clusters (the record omits status, which evaluate() often reads).

// replayable reports whether the pair's instances can be replayed: both
// sides that have the profile define it as an event profile, the change is
// not a gain (nothing is recorded yet), and the status records instances.
func (c *comparison) replayable(p *pair, bp, hp *spec.Profile) bool {
	if c.opts.EventInstances == nil || p.change == ProfileGained {
		return false
	}
	if !isEventProfile(bp) || (hp != nil && !isEventProfile(hp)) {
		return false
	}
	return len(c.opts.EventInstances(p.cluster, p.profile)) > 0
}

// replayPair renders the recorded instances of a pair at both sides.
func (c *comparison) replayPair(ctx context.Context, p *pair) {
	recorded := c.opts.EventInstances(p.cluster, p.profile)
	set := emptySet()
	var changed []InstanceChange
	for _, in := range recorded {
		ic := c.replayInstance(ctx, p, in)
		if ic == nil {
			continue
		}
		for _, o := range ic.Objects {
			set.add(o)
		}
		changed = append(changed, *ic)
	}
	selection := c.selectionChanged(p.profile)
	if len(changed) == 0 && !selection {
		return
	}
	notes := append(slices.Clone(p.notes), fmt.Sprintf("event profile: %d of the %s recorded in status change, each re-rendered "+
		"from its recorded resource", len(changed), plural(len(recorded), "instance")))
	if selection {
		notes = append(notes, "its event source or trigger changes: which resources match is decided on the clusters, "+
			"so instances the new selection adds or drops are not shown")
	}
	p.set = set
	p.result = &ProfileChange{Profile: p.profile, Change: p.change, Reasons: p.reasons,
		Notes: notes, Counts: set.counts, Objects: set.objects, Instances: changed}
}

// selectionChanged reports whether the profile's event trigger or event
// source differ between the sides (a profile lost at head selects nothing
// there: that is the withdrawal the instances show).
func (c *comparison) selectionChanged(profile string) bool {
	bp, hp := c.base.Fleet.Profile(profile), c.head.Fleet.Profile(profile)
	if hp == nil || !hp.IsEventProfile() {
		return false
	}
	bt, ht := bp.Spec.EventTrigger, hp.Spec.EventTrigger
	if !reflect.DeepEqual(bt, ht) {
		return true
	}
	bs, hs := c.base.Fleet.EventSource(bt.EventSourceName), c.head.Fleet.EventSource(ht.EventSourceName)
	return bs == nil || hs == nil || !reflect.DeepEqual(bs.Spec, hs.Spec)
}

// replayInstance is what the change does to one recorded instance; nil
// when nothing changes.
func (c *comparison) replayInstance(ctx context.Context, p *pair, in status.EventInstance) *InstanceChange {
	ic := &InstanceChange{Name: in.Name, SourceCluster: in.SourceCluster, Resource: in.Resource, Objects: []ObjectChange{}}
	if !in.Replayable() {
		return c.unreplayable(p, ic, in)
	}
	ev, err := eventOf(in)
	if err != nil {
		ic.Notes = []string{"its recorded resource is unreadable: " + err.Error()}
		return ic
	}
	b, berr := c.renderEvent(ctx, c.base, p, ev)
	var h *render.Result
	if p.change != ProfileLost {
		var herr error
		if h, herr = c.renderEvent(ctx, c.head, p, ev); herr != nil {
			p.headErr = fmt.Errorf("event instance %s (%s on %s): %w", in.Name, in.Resource, in.SourceCluster, herr)
			return nil
		}
	}
	ic.Notes = replayNotes(in, p.change, b, berr)
	if p.change == ProfileUpdated && b != nil && b.Hash == h.Hash {
		return nil
	}
	set := c.objectSet(b, h, p)
	ic.Objects, ic.Counts = set.objects, set.counts
	if len(ic.Objects) == 0 && berr == nil {
		return nil
	}
	return ic
}

// replayNotes explains a base rendering that does not stand for what the
// cluster holds.
func replayNotes(in status.EventInstance, change string, b *render.Result, berr error) []string {
	switch {
	case berr != nil && change == ProfileLost:
		return []string{"the base revision fails to render this instance (" + berr.Error() + "): the objects it withdraws are " +
			"those status records: " + strings.Join(in.Objects, ", ")}
	case berr != nil:
		return []string{"the base revision fails to render this instance (" + berr.Error() + "): its objects are shown as created"}
	case b.Hash != in.Event.RenderHash:
		n := "its base rendering differs from the one recorded as applied: the base is not the revision applied"
		if len(in.Event.Omitted) > 0 {
			n += ", or the templates read what status does not record (" + in.Event.OmittedText() + ")"
		}
		return []string{n}
	}
	return nil
}

// renderEvent renders one instance at a side (a tenant's objects outside
// its scope fail it as in render).
func (c *comparison) renderEvent(ctx context.Context, s *side, p *pair, ev *render.EventData) (*render.Result, error) {
	prof := s.Fleet.Profile(p.profile)
	res, err := c.opts.Renderer.Render(ctx, render.Request{FS: s.Fleet.FS, Revision: s.Revision,
		Profile: prof, Cluster: s.facts[p.cluster], TreeHash: s.TreeHash, Event: ev})
	if err != nil {
		return nil, err
	}
	if err := tenancy.Err(prof, res, tenancy.Options{FS: s.Fleet.FS}); err != nil {
		return nil, err
	}
	return res, nil
}

// eventOf turns a record into template data, with numbers as a watch
// gives them (int64 where integral), so the rendering matches the
// daemon's.
func eventOf(in status.EventInstance) (*render.EventData, error) {
	ev := &render.EventData{Name: in.Name, SourceCluster: in.SourceCluster}
	if r := in.Event.Resource; r != nil {
		if err := jsonCopy(r, &ev.Resource); err != nil {
			return nil, err
		}
	}
	for _, r := range in.Event.Resources {
		var m map[string]any
		if err := jsonCopy(r, &m); err != nil {
			return nil, err
		}
		ev.Resources = append(ev.Resources, m)
	}
	return ev, nil
}

func jsonCopy(in any, out *map[string]any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return utiljson.Unmarshal(b, out)
}

// unreplayable is an instance recorded without its resource (by an older
// regatta): withdrawn, its recorded objects go; otherwise it is named.
func (c *comparison) unreplayable(p *pair, ic *InstanceChange, in status.EventInstance) *InstanceChange {
	if p.change != ProfileLost {
		ic.Notes = []string{"recorded without its resource (by an older regatta): cannot be re-rendered here; the cluster re-renders and re-applies it"}
		return ic
	}
	ic.Notes = []string{"recorded without its resource (by an older regatta): the objects status records are withdrawn"}
	set := emptySet()
	gone := c.withdrawAction(p.profile)
	for _, ref := range in.Objects {
		parts := strings.Split(ref, "/")
		oc := ObjectChange{Action: gone, Kind: parts[0], Name: parts[len(parts)-1]}
		if len(parts) == 3 {
			oc.Namespace = parts[1]
		}
		set.add(oc)
	}
	ic.Objects, ic.Counts = set.objects, set.counts
	return ic
}
