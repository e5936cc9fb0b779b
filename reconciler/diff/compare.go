package diff

import (
	"context"
	"errors"
	"runtime"
	"sort"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// Side is one revision of the fleet repository, loaded and valid.
type Side struct {
	// Ref is the revision as the user gave it (origin/main, HEAD).
	Ref string
	// Revision is the commit SHA; it keys the render cache, so two sides
	// with the same non-empty Revision must hold the same tree.
	Revision string
	Fleet    *spec.Repository
	// TreeHash returns the Git hash of a path at Revision (repo.Tree's
	// TreeHash), making render cache keys cheap. Optional.
	TreeHash func(path string) (string, error)
	// Facts returns what is known of one of the revision's clusters.
	Facts func(*spec.Cluster) render.ClusterFacts
}

// Options configures a comparison.
type Options struct {
	// Renderer renders both sides; its cache makes unchanged pairs cheap.
	Renderer *render.Renderer
	// Concurrency is how many pairs render at once (default: 2 × CPUs).
	Concurrency int
	// WarnClusters warns when more clusters than this are affected; 0
	// disables the check.
	WarnClusters int
	// WarnPercent warns when more than this share of the fleet (in
	// percent) is affected; 0 disables the check.
	WarnPercent int
	// EventInstances returns the instances of an event profile the status
	// branch records on a cluster; plan re-renders them at both sides.
	// Optional: without it, event profiles are reported with a note.
	EventInstances func(cluster, profile string) []status.EventInstance
}

// ErrNoRenderer is returned by Compare without Options.Renderer.
var ErrNoRenderer = errors.New("diff: Options.Renderer is required")

// Compare compares head with base. Failures to render at head are not
// errors of Compare: they are the report's Errors. Compare fails only when
// ctx ends or the options are unusable.
func Compare(ctx context.Context, base, head Side, opts Options) (*Report, error) {
	if opts.Renderer == nil {
		return nil, ErrNoRenderer
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 2 * runtime.GOMAXPROCS(0)
	}
	c := &comparison{base: newSide(base), head: newSide(head), opts: opts, sets: newSetCache()}
	entries := c.entries()
	hits0, misses0 := opts.Renderer.CacheStats()
	if err := c.renderAll(ctx, entries); err != nil {
		return nil, err
	}
	rep := c.report(entries)
	hits, misses := opts.Renderer.CacheStats()
	rep.Renders = RenderStats{Run: misses - misses0, Shared: hits - hits0}
	return rep, nil
}

// comparison is the state of one Compare call.
type comparison struct {
	base, head *side
	opts       Options
	sets       *setCache
}

// side is a Side with its facts and matches computed once.
type side struct {
	Side
	facts   map[string]render.ClusterFacts
	matched map[string]map[string]bool // cluster -> profile -> selected
	sops    *sopsIndex
}

func newSide(s Side) *side {
	out := &side{Side: s, facts: map[string]render.ClusterFacts{}, matched: map[string]map[string]bool{},
		sops: newSopsIndex(s.Fleet.FS)}
	for _, c := range s.Fleet.Clusters {
		f := s.Facts(c)
		out.facts[c.Metadata.Name] = f
		m := map[string]bool{}
		for _, p := range s.Fleet.Profiles {
			if p.Matches(c.Metadata.Name, f.Labels) {
				m[p.Metadata.Name] = true
			}
		}
		out.matched[c.Metadata.Name] = m
	}
	return out
}

// selectedCount returns how many clusters select a profile.
func (s *side) selectedCount(profile string) int {
	n := 0
	for _, m := range s.matched {
		if m[profile] {
			n++
		}
	}
	return n
}

// entry is one cluster of either side with its (cluster, profile) pairs.
type entry struct {
	cluster string
	change  string // ClusterAdded, ClusterRemoved or ""
	notes   []string
	pairs   []*pair
}

// pair is one (cluster, profile) whose membership or rendering may change.
type pair struct {
	cluster, profile string
	change           string // ProfileGained, ProfileLost or ProfileUpdated
	reasons          []Reason
	notes            []string

	result  *ProfileChange // nil: nothing changes
	set     *objectSet     // result's objects
	headErr error          // failed to render at head
	baseErr error          // failed to render at base
}

// entries lists every cluster of either side, sorted, with its pairs.
func (c *comparison) entries() []*entry {
	names := map[string]bool{}
	for _, s := range []*side{c.base, c.head} {
		for _, cl := range s.Fleet.Clusters {
			names[cl.Metadata.Name] = true
		}
	}
	out := make([]*entry, 0, len(names))
	for _, name := range sortedKeys(names) {
		out = append(out, c.entry(name))
	}
	return out
}

func (c *comparison) entry(name string) *entry {
	bc, hc := c.base.Fleet.Cluster(name), c.head.Fleet.Cluster(name)
	e := &entry{cluster: name}
	switch {
	case bc == nil:
		e.change = ClusterAdded
	case hc == nil:
		e.change = ClusterRemoved
	}
	if hc != nil && hc.Spec.Paused {
		e.notes = append(e.notes, "the cluster is paused: nothing is applied until it is resumed")
	}
	if e.change == ClusterRemoved {
		e.notes = append(e.notes, "regatta stops managing the cluster; its objects are left in place")
	}
	profiles := map[string]bool{}
	for p := range c.base.matched[name] {
		profiles[p] = true
	}
	for p := range c.head.matched[name] {
		profiles[p] = true
	}
	for _, p := range sortedKeys(profiles) {
		e.pairs = append(e.pairs, c.newPair(e, p))
	}
	return e
}

func (c *comparison) newPair(e *entry, profile string) *pair {
	inBase, inHead := c.base.matched[e.cluster][profile], c.head.matched[e.cluster][profile]
	p := &pair{cluster: e.cluster, profile: profile, change: ProfileUpdated}
	switch {
	case inBase && inHead:
		p.notes = syncModeNotes(c.head.Fleet.Profile(profile), ProfileUpdated)
		return p
	case inHead:
		p.change = ProfileGained
		p.notes = syncModeNotes(c.head.Fleet.Profile(profile), ProfileGained)
	default:
		p.change = ProfileLost
	}
	p.reasons = c.reasons(e, profile)
	return p
}

// syncModeNotes says when a profile's changes are not simply applied.
func syncModeNotes(p *spec.Profile, change string) []string {
	switch {
	case p.Spec.SyncMode == spec.SyncModeDryRun:
		return []string{"syncMode DryRun: regatta only reports these changes"}
	case p.Spec.SyncMode == spec.SyncModeOneTime && change == ProfileUpdated:
		return []string{"syncMode OneTime: a profile applied once is not updated"}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
