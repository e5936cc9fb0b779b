package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// NewReport returns an empty report for the two revisions, with every list
// non-nil (JSON writes [] rather than null).
func NewReport(base, head Rev) *Report {
	return &Report{SchemaVersion: SchemaVersion, Base: base, Head: head,
		Errors: []Problem{}, Warnings: []Warning{}, Groups: []Group{}}
}

// Failed reports whether the head revision has errors.
func (r *Report) Failed() bool { return len(r.Errors) > 0 }

// report assembles the groups, the summary, the errors and the warnings.
func (c *comparison) report(entries []*entry) *Report {
	r := NewReport(Rev{c.base.Ref, c.base.Revision}, Rev{c.head.Ref, c.head.Revision})
	r.Summary.Clusters = len(c.head.Fleet.Clusters)
	r.Groups = groupEntries(entries, &r.Summary)
	r.Summary.Changed = len(r.Groups) > 0
	r.Errors = renderProblems(entries, func(p *pair) error { return p.headErr })
	r.Warnings = c.warnings(entries, r)
	r.Rollouts = c.rollouts(entries)
	if len(c.head.Fleet.Tenants) > 0 || (c.base.Fleet != nil && len(c.base.Fleet.Tenants) > 0) {
		r.Tenants = byTenant(r.Groups, c.head.Fleet, c.base.Fleet)
	}
	return r
}

// groupEntries groups the clusters with identical changes and counts them.
func groupEntries(entries []*entry, sum *Summary) []Group {
	byID := map[string]*Group{}
	var order []string
	for _, e := range entries {
		changes := e.changes()
		if len(changes) == 0 && e.change == "" {
			continue
		}
		sum.count(e, changes)
		id := e.groupID()
		g := byID[id]
		if g == nil {
			g = &Group{ID: id, Change: e.change, Notes: e.notes, Profiles: changes}
			byID[id] = g
			order = append(order, id)
		}
		g.Clusters = append(g.Clusters, e.cluster)
	}
	out := make([]Group, len(order))
	for i, id := range order {
		out[i] = *byID[id]
	}
	return out
}

// changes returns the entry's profile changes, by profile name.
func (e *entry) changes() []ProfileChange {
	out := []ProfileChange{}
	for _, p := range e.pairs {
		if p.result != nil {
			out = append(out, *p.result)
		}
	}
	return out
}

func (s *Summary) count(e *entry, changes []ProfileChange) {
	s.ClustersAffected++
	switch e.change {
	case ClusterAdded:
		s.ClustersAdded++
	case ClusterRemoved:
		s.ClustersRemoved++
	}
	var n Counts
	for _, pc := range changes {
		n.add(pc.Counts)
		switch pc.Change {
		case ProfileGained:
			s.ProfilesGained++
		case ProfileLost:
			s.ProfilesLost++
		}
	}
	s.Created += n.Created
	s.Updated += n.Updated
	s.Deleted += n.Deleted
	s.Released += n.Released
}

// groupID is a digest of an entry's changes, without its name. Object
// lists are shared by every cluster with the same render keys, so their
// digest is computed once.
func (e *entry) groupID() string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode([]any{e.change, e.notes})
	for _, p := range e.pairs {
		if r := p.result; r != nil {
			_ = enc.Encode([]any{r.Profile, r.Change, r.Reasons, r.Notes})
			if len(r.Instances) > 0 {
				_ = enc.Encode(r.Instances)
			}
			if len(r.Artifacts) > 0 { // other digests, another group
				_ = enc.Encode(r.Artifacts)
			}
			h.Write([]byte(p.set.digest()))
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// renderProblems aggregates render failures by message.
func renderProblems(entries []*entry, errOf func(*pair) error) []Problem {
	byText := map[string]*Problem{}
	for _, e := range entries {
		for _, p := range e.pairs {
			err := errOf(p)
			if err == nil {
				continue
			}
			text := err.Error()
			if byText[text] == nil {
				byText[text] = problemOf(err)
			}
			byText[text].Clusters = append(byText[text].Clusters, p.cluster)
		}
	}
	out := []Problem{}
	for _, t := range sortedKeys(byText) {
		out = append(out, *byText[t])
	}
	return out
}

func problemOf(err error) *Problem {
	p := &Problem{Text: err.Error()}
	var re *render.Error
	if errors.As(err, &re) {
		p.File, p.Line, p.Profile, p.Addon = re.File, re.Line, re.Profile, re.Addon
	}
	return p
}

// ClusterList writes up to max cluster names, then "and N more".
func ClusterList(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + ", and " + strconv.Itoa(len(names)-max) + " more"
}

// ValidationProblems turns the errors of a repository load into Problems,
// worded as `regatta validate` prints them.
func ValidationProblems(diags spec.Diagnostics) []Problem {
	out := []Problem{}
	for _, d := range diags.Errors() {
		out = append(out, Problem{Text: d.Error(), File: d.File, Line: d.Line, Field: d.Field})
	}
	return out
}

// ValidationWarnings turns the warnings of a repository load into Warnings.
// The load's "selects no cluster" is left out: it judges by cluster.yaml
// labels only, while Compare warns about the profiles that stop selecting
// any cluster with the facts in use.
func ValidationWarnings(diags spec.Diagnostics) []Warning {
	var out []Warning
	for _, d := range diags.Warnings() {
		if d.Message != "selects no cluster" {
			out = append(out, Warning{Kind: WarnRepository, Message: d.Error()})
		}
	}
	return out
}
