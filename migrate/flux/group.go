package flux

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// clusterUnits are the converted Kustomizations of one cluster.
type clusterUnits struct {
	cluster string
	units   map[string]*unit
	order   []string
}

// group is the clusters that share one profile for a Kustomization.
type group struct {
	ksKey    string
	sig      string
	clusters []string
	name     string
	empty    bool
}

// grouper assigns clusters' units to profiles.
type grouper struct {
	report *migrate.Report
	all    []*clusterUnits
	sigs   map[[2]string]string // cluster, ksKey -> signature
	groups map[[2]string]*group // ksKey, sig -> group
	list   []*group
}

// sig is a unit's shape and name and, recursively, its dependencies'
// signatures: clusters with equal signatures can share every profile on
// the way down, so dependsOn names one profile for all of them.
func (g *grouper) sig(cu *clusterUnits, key string, visiting map[string]bool) string {
	k := [2]string{cu.cluster, key}
	if s, ok := g.sigs[k]; ok {
		return s
	}
	u := cu.units[key]
	if u == nil || visiting[key] {
		return "absent"
	}
	visiting[key] = true
	defer delete(visiting, key)
	js, _ := json.Marshal(u.shape)
	if u.empty() {
		js = []byte("empty") // no profile of its own: only its dependencies count
	}
	parts := []string{u.name, string(js)}
	for _, d := range u.deps {
		parts = append(parts, d+"="+g.sig(cu, d, visiting))
	}
	sum := sha256.Sum256([]byte(fmt.Sprint(parts)))
	s := hex.EncodeToString(sum[:8])
	g.sigs[k] = s
	return s
}

// assign groups every unit and names the profiles: the Kustomization's
// name, with the first cluster's name added when clusters differ.
func (g *grouper) assign() {
	g.sigs, g.groups = map[[2]string]string{}, map[[2]string]*group{}
	for _, cu := range g.all {
		for _, key := range cu.order {
			s := g.sig(cu, key, map[string]bool{})
			gk := [2]string{key, s}
			gr, ok := g.groups[gk]
			if !ok {
				u := cu.units[key]
				gr = &group{ksKey: key, sig: s, empty: u.empty()}
				g.groups[gk] = gr
				g.list = append(g.list, gr)
			}
			gr.clusters = append(gr.clusters, cu.cluster)
		}
	}
	perKey := map[string]int{}
	for _, gr := range g.list {
		perKey[gr.ksKey]++
	}
	used := map[string]bool{}
	for _, gr := range g.list {
		u := g.unit(gr)
		name := u.name
		if perKey[gr.ksKey] > 1 {
			name = profileName(u.name + "-" + gr.clusters[0])
		}
		for i := 2; used[name]; i++ {
			name = profileName(fmt.Sprintf("%s-%d", u.name, i))
		}
		used[name] = true
		gr.name = name
	}
}

func (g *grouper) unit(gr *group) *unit {
	return g.clusterUnits(gr.clusters[0]).units[gr.ksKey]
}

func (g *grouper) clusterUnits(cluster string) *clusterUnits {
	for _, cu := range g.all {
		if cu.cluster == cluster {
			return cu
		}
	}
	return nil
}

func (g *grouper) groupOf(cluster, key string) *group {
	s := g.sigs[[2]string{cluster, key}]
	return g.groups[[2]string{key, s}]
}

// dependsOn names the profiles a group depends on; an empty profile (a
// Kustomization that only holds other Kustomizations) passes its own
// dependencies on.
func (g *grouper) dependsOn(gr *group, seen map[string]bool) []string {
	var out []string
	u := g.unit(gr)
	for _, d := range u.deps {
		dg := g.groupOf(gr.clusters[0], d)
		if dg == nil {
			g.report.Add(u.doc, "spec.dependsOn", "Kustomization %s is not defined for cluster %s: dependency dropped", d, gr.clusters[0])
			continue
		}
		if seen[dg.ksKey] {
			continue
		}
		seen[dg.ksKey] = true
		if dg.empty {
			out = append(out, g.dependsOn(dg, seen)...)
		} else {
			out = append(out, dg.name)
		}
	}
	return slices.Compact(out)
}

// profiles builds a profile per non-empty group.
func (g *grouper) profiles() []*spec.Profile {
	var out []*spec.Profile
	for _, gr := range g.list {
		if gr.empty {
			continue
		}
		out = append(out, g.profile(gr))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metadata.Name < out[j].Metadata.Name })
	return out
}

func (g *grouper) profile(gr *group) *spec.Profile {
	u := g.unit(gr)
	p := &spec.Profile{
		TypeMeta: spec.TypeMeta{APIVersion: spec.APIVersion, Kind: spec.KindProfile},
		Metadata: spec.ObjectMeta{Name: gr.name},
	}
	p.Spec.ClusterSelector = clusterSelector(gr.clusters)
	p.Spec.DependsOn = g.dependsOn(gr, map[string]bool{gr.ksKey: true})
	p.Spec.HealthTimeout = u.shape.Timeout
	units := make([]*unit, len(gr.clusters))
	for i, c := range gr.clusters {
		units[i] = g.clusterUnits(c).units[gr.ksKey]
	}
	if k := u.shape.Kustomize; k != nil {
		p.Spec.Addons = append(p.Spec.Addons, kustomizeAddonOf(u, k, units))
		p.Spec.Overlays = append(p.Spec.Overlays, kustomizeOverlays(gr, u, units)...)
	}
	for hi, h := range u.helm {
		p.Spec.Addons = append(p.Spec.Addons, helmAddon(h, units, hi))
		base := p.Spec.Addons[len(p.Spec.Addons)-1].Helm.Values
		p.Spec.Overlays = append(p.Spec.Overlays, helmOverlays(gr, h.Name, units, hi, base)...)
	}
	return p
}

// helmOverlays give clusters their values beyond the add-on's and the
// HelmRelease's post-render patches: one overlay per cluster whose values
// differ, and when every cluster has the same patches, one overlay for
// the others (the first matching overlay of an add-on wins).
func helmOverlays(gr *group, addon string, units []*unit, hi int, base map[string]any) []spec.Overlay {
	var out []spec.Overlay
	same := true
	for _, u := range units[1:] {
		same = same && reflect.DeepEqual(u.helm[hi].patches, units[0].helm[hi].patches)
	}
	rest := []string{}
	for i, c := range gr.clusters {
		hu := units[i].helm[hi]
		ov := spec.Overlay{Values: nilIfEmpty(migrate.Diff(hu.values, base)), Patches: hu.patches}
		switch {
		case ov.Values != nil || (!same && len(ov.Patches) > 0):
			out = append(out, overlayFor(c, addon, ov))
		case same && len(ov.Patches) > 0:
			rest = append(rest, c)
		}
	}
	if len(rest) > 0 {
		out = append(out, spec.Overlay{
			Name:            addon + "-post-render",
			ClusterSelector: clusterSelector(rest),
			Addon:           addon,
			Patches:         units[0].helm[hi].patches,
		})
	}
	return out
}

func clusterSelector(clusters []string) spec.LabelSelector {
	return spec.LabelSelector{MatchExpressions: []spec.LabelSelectorRequirement{
		{Key: clusterLabel, Operator: "In", Values: clusters},
	}}
}

// kustomizeAddon names the add-on of a Kustomization's plain objects.
const kustomizeAddon = "kustomize"

func kustomizeAddonOf(u *unit, k *spec.KustomizeSource, units []*unit) spec.Addon {
	src := *k
	src.Path = u.path
	if samePatches(units) {
		src.Patches = append(slices.Clone(u.patches), k.Patches...)
	}
	return spec.Addon{Name: kustomizeAddon, Kustomize: &src, Wait: waitField(u.shape.Wait), PostBuild: u.shape.PostBuild, OCI: u.shape.OCI}
}

// kustomizeOverlays give clusters their own path and, when clusters'
// Kustomizations patch differently, their own patches (which then apply
// after the build rather than in it).
func kustomizeOverlays(gr *group, u *unit, units []*unit) []spec.Overlay {
	var out []spec.Overlay
	same := samePatches(units)
	for i, c := range gr.clusters {
		ov := spec.Overlay{}
		if units[i].path != u.path {
			ov.Path = units[i].path
		}
		if !same {
			ov.Patches = units[i].patches
		}
		if ov.Path != "" || len(ov.Patches) > 0 {
			out = append(out, overlayFor(c, kustomizeAddon, ov))
		}
	}
	return out
}

func samePatches(units []*unit) bool {
	for _, u := range units[1:] {
		if !reflect.DeepEqual(u.patches, units[0].patches) {
			return false
		}
	}
	return true
}

func helmAddon(h helmUnit, units []*unit, hi int) spec.Addon {
	values := make([]map[string]any, len(units))
	for i, u := range units {
		values[i] = u.helm[hi].values
	}
	src := h.Source
	src.Values = nilIfEmpty(migrate.Common(values))
	return spec.Addon{Name: h.Name, Helm: &src, Wait: waitField(h.Wait)}
}

func overlayFor(cluster, addon string, ov spec.Overlay) spec.Overlay {
	ov.Name = cluster + "-" + addon
	ov.Addon = addon
	ov.ClusterSelector = spec.LabelSelector{MatchLabels: map[string]string{clusterLabel: cluster}}
	return ov
}

func waitField(wait bool) *bool {
	if wait {
		return nil
	}
	return &wait
}

func nilIfEmpty(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}
