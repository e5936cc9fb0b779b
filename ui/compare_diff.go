package ui

import (
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// clusterChanges lists the clusters added and removed, and of the
// clusters in both frames their reachability and pairs that changed,
// problems first.
func clusterChanges(from, to []status.ClusterStatus) []changeRow {
	before := make(map[string]*status.ClusterStatus, len(from))
	for i := range from {
		before[from[i].Cluster] = &from[i]
	}
	var rows []changeRow
	seen := make(map[string]bool, len(to))
	for i := range to {
		c := &to[i]
		seen[c.Cluster] = true
		if b, ok := before[c.Cluster]; ok {
			rows = append(rows, clusterChange(b, c)...)
			continue
		}
		rows = append(rows, changeRow{Cluster: c.Cluster, Change: changeAdded,
			Fields: []fieldChange{{Field: "pairs", After: strconv.Itoa(len(c.Profiles))}}})
	}
	for _, c := range from {
		if !seen[c.Cluster] {
			rows = append(rows, changeRow{Cluster: c.Cluster, Change: changeRemoved,
				Fields: []fieldChange{{Field: "pairs", Before: strconv.Itoa(len(c.Profiles))}}})
		}
	}
	return stableByRank(rows)
}

// clusterChange is a cluster's reachability change, then its pairs'.
func clusterChange(b, a *status.ClusterStatus) []changeRow {
	var rows []changeRow
	if b.Reachable != a.Reachable || b.Error != a.Error {
		f := []fieldChange{{Field: "reachable", Before: boolText(b.Reachable), After: boolText(a.Reachable)}}
		if b.Error != a.Error {
			f = append(f, fieldChange{Field: "error", Before: clip(b.Error), After: clip(a.Error)})
		}
		rows = append(rows, changeRow{Cluster: a.Cluster, Change: kindOf(!b.Reachable, !a.Reachable), Fields: f})
	}
	pb := make(map[string]*status.Profile, len(b.Profiles))
	for i := range b.Profiles {
		pb[b.Profiles[i].Name] = &b.Profiles[i]
	}
	seen := make(map[string]bool, len(a.Profiles))
	for i := range a.Profiles {
		p := &a.Profiles[i]
		seen[p.Name] = true
		if row, ok := pairChange(a.Cluster, pb[p.Name], p); ok {
			rows = append(rows, row)
		}
	}
	for i := range b.Profiles {
		if p := &b.Profiles[i]; !seen[p.Name] {
			row, _ := pairChange(a.Cluster, p, nil)
			rows = append(rows, row)
		}
	}
	return rows
}

// pairChange is how a pair changed (nil: absent on that side); false when
// nothing the page lists changed.
func pairChange(cluster string, b, a *status.Profile) (changeRow, bool) {
	var zero status.Profile
	before, after := b, a
	if before == nil {
		before = &zero
	}
	if after == nil {
		after = &zero
	}
	f := pairFields(before, after)
	if len(f) == 0 {
		return changeRow{}, false
	}
	row := changeRow{Cluster: cluster, Profile: after.Name, Fields: f}
	switch {
	case b == nil && failing(a.State):
		row.Change = changeFailed
	case b == nil:
		row.Change = changeAdded
	case a == nil:
		row.Profile, row.Change = b.Name, changeRemoved
	default:
		row.Change = kindOf(failing(b.State), failing(a.State))
	}
	return row, true
}

// pairFields are a pair's fields that changed: state, revision, objects,
// error.
func pairFields(b, a *status.Profile) []fieldChange {
	var f []fieldChange
	add := func(field, before, after string) {
		if before != after {
			f = append(f, fieldChange{Field: field, Before: before, After: after})
		}
	}
	add("state", b.State, a.State)
	add("revision", shortRevision(b.Revision), shortRevision(a.Revision))
	add("objects", objectsText(b), objectsText(a))
	add("error", clip(errString(b.Error)), clip(errString(a.Error)))
	return f
}

// maxFieldText bounds a text in a compare row (an error): 500 rows of two
// whole errors could pass 2 MiB; the cluster page shows them whole.
const maxFieldText = 300

// clip cuts s to maxFieldText bytes, at a character's start, marked.
func clip(s string) string {
	if len(s) <= maxFieldText {
		return s
	}
	cut := maxFieldText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// shortRevision is a revision's short form, "" for none (the page shows
// absence alike for every field).
func shortRevision(rev string) string {
	if rev == "" {
		return ""
	}
	return status.ShortRevision(rev)
}

func objectsText(p *status.Profile) string {
	if p.Name == "" {
		return ""
	}
	return strconv.Itoa(p.Objects)
}

// fleetChanges lists the fleet's errors, refused tenants and rollouts that
// appeared, went away or changed, new problems first, then fixes.
func fleetChanges(b, a status.Fleet) []fleetChange {
	var out []fleetChange
	out = append(out, errorChanges(b.Errors, a.Errors)...)
	out = append(out, refusedChanges(b.RefusedTenants, a.RefusedTenants)...)
	out = append(out, rolloutChanges(b.Rollouts, a.Rollouts)...)
	sort.SliceStable(out, func(i, j int) bool { return changeRank[out[i].Change] < changeRank[out[j].Change] })
	return out
}

// errorChanges: the errors that keep a revision out, new ones as
// problems, gone ones as fixes.
func errorChanges(b, a []status.Error) []fleetChange {
	var out []fleetChange
	for _, e := range setDiff(errTexts(a), errTexts(b)) {
		out = append(out, fleetChange{What: "error", Name: clip(e), Change: changeFailed})
	}
	for _, e := range setDiff(errTexts(b), errTexts(a)) {
		out = append(out, fleetChange{What: "error", Name: clip(e), Change: changeFixed})
	}
	return out
}

func errTexts(es []status.Error) []string {
	out := make([]string, len(es))
	for i := range es {
		out[i] = errString(&es[i])
	}
	return out
}

// setDiff is what of xs ys lacks, in xs's order.
func setDiff(xs, ys []string) []string {
	in := make(map[string]bool, len(ys))
	for _, y := range ys {
		in[y] = true
	}
	var out []string
	for _, x := range xs {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

func refusedChanges(b, a []status.RefusedTenant) []fleetChange {
	names := func(ts []status.RefusedTenant) []string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = t.Tenant
		}
		return out
	}
	var out []fleetChange
	for _, t := range setDiff(names(a), names(b)) {
		out = append(out, fleetChange{What: "refused tenant", Name: t, Change: changeFailed})
	}
	for _, t := range setDiff(names(b), names(a)) {
		out = append(out, fleetChange{What: "refused tenant", Name: t, Change: changeFixed})
	}
	return out
}

// rolloutChanges compares rollouts by profile: revision, stage, state.
func rolloutChanges(b, a []status.RolloutStatus) []fleetChange {
	before := make(map[string]*status.RolloutStatus, len(b))
	for i := range b {
		before[b[i].Profile] = &b[i]
	}
	var out []fleetChange
	seen := map[string]bool{}
	for i := range a {
		r := &a[i]
		seen[r.Profile] = true
		var zero status.RolloutStatus
		p, had := before[r.Profile]
		if !had {
			p = &zero
		}
		f := rolloutFields(p, r)
		switch {
		case len(f) == 0:
		case !had:
			out = append(out, fleetChange{What: "rollout", Name: r.Profile, Change: changeAdded, Fields: f})
		default:
			out = append(out, fleetChange{What: "rollout", Name: r.Profile, Change: kindOf(p.Halted, r.Halted), Fields: f})
		}
	}
	for i := range b {
		if r := &b[i]; !seen[r.Profile] {
			out = append(out, fleetChange{What: "rollout", Name: r.Profile, Change: changeRemoved, Fields: rolloutFields(r, &status.RolloutStatus{})})
		}
	}
	return out
}

func rolloutFields(b, a *status.RolloutStatus) []fieldChange {
	var f []fieldChange
	add := func(field, before, after string) {
		if before != after {
			f = append(f, fieldChange{Field: field, Before: before, After: after})
		}
	}
	add("revision", shortRevision(b.Revision), shortRevision(a.Revision))
	add("stage", b.Stage, a.Stage)
	add("state", rolloutState(b), rolloutState(a))
	return f
}

// rolloutState names a rollout's state as the profile page does (its
// stage's progress, Halted), Complete once done.
func rolloutState(r *status.RolloutStatus) string {
	switch {
	case r.Profile == "":
		return ""
	case r.Complete:
		return "Complete"
	}
	return stageProgress(*r)
}
