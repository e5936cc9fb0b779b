package diff

import (
	"fmt"
	"strings"
)

// warnings lists the risky changes: deleted Namespaces and CRDs, profiles
// that stop selecting any cluster, many clusters at once, and base
// revision render failures (whose pairs are compared with nothing).
func (c *comparison) warnings(entries []*entry, r *Report) []Warning {
	out := []Warning{}
	out = append(out, deleteWarnings(entries)...)
	out = append(out, c.selectWarnings()...)
	out = append(out, c.manyWarning(r.Summary)...)
	for _, p := range renderProblems(entries, func(p *pair) error { return p.baseErr }) {
		out = append(out, Warning{Kind: WarnBaseRender, Clusters: p.Clusters,
			Message: "the base revision fails to render (its objects are shown as new): " + p.Text})
	}
	return out
}

// deleteWarnings names every Namespace and CRD deleted, with its clusters.
func deleteWarnings(entries []*entry) []Warning {
	clusters := map[string][]string{}
	kinds := map[string]string{}
	emptied := map[string]bool{} // deleted with its contents on some cluster
	for _, e := range entries {
		for _, p := range e.pairs {
			if p.result == nil {
				continue
			}
			for _, o := range p.result.Objects {
				kind := deleteKind(o)
				if kind == "" {
					continue
				}
				ref := o.Ref()
				if !o.keepsContents {
					emptied[ref] = true
				}
				if n := len(clusters[ref]); n == 0 || clusters[ref][n-1] != e.cluster {
					clusters[ref] = append(clusters[ref], e.cluster)
				}
				kinds[ref] = kind
			}
		}
	}
	var out []Warning
	for _, ref := range sortedKeys(clusters) {
		on := plural(len(clusters[ref]), "cluster")
		msg := fmt.Sprintf("%s is deleted on %s: everything in it is deleted too", ref, on)
		switch {
		case kinds[ref] == WarnDeleteCRD:
			msg = fmt.Sprintf("%s is deleted on %s: every custom resource of it is deleted too", ref, on)
		case !emptied[ref]:
			msg = fmt.Sprintf("%s is deleted on %s where nothing else is in it: regatta created it (createNamespace) and keeps it while it holds objects", ref, on)
		}
		out = append(out, Warning{Kind: kinds[ref], Clusters: clusters[ref], Message: msg})
	}
	return out
}

func deleteKind(o ObjectChange) string {
	if o.Action != ActionDeleted {
		return ""
	}
	switch {
	case o.Kind == "Namespace" && o.APIVersion == "v1":
		return WarnDeleteNamespace
	case o.Kind == "CustomResourceDefinition" && strings.HasPrefix(o.APIVersion, "apiextensions.k8s.io/"):
		return WarnDeleteCRD
	}
	return ""
}

// selectWarnings names profiles that select no cluster at head but did at
// base, or are new.
func (c *comparison) selectWarnings() []Warning {
	var out []Warning
	for _, p := range c.head.Fleet.Profiles {
		name := p.Metadata.Name
		if c.head.selectedCount(name) > 0 {
			continue
		}
		switch {
		case c.base.Fleet.Profile(name) == nil:
			out = append(out, Warning{Kind: WarnSelectsNothing,
				Message: fmt.Sprintf("new profile %s selects no cluster", name)})
		case c.base.selectedCount(name) > 0:
			out = append(out, Warning{Kind: WarnSelectsNothing, Message: fmt.Sprintf(
				"profile %s selects no cluster any more (it selected %s)", name, plural(c.base.selectedCount(name), "cluster"))})
		}
	}
	return out
}

// manyWarning warns when the change reaches more clusters than the
// thresholds allow.
func (c *comparison) manyWarning(s Summary) []Warning {
	n, total := s.ClustersAffected, max(s.Clusters, 1)
	over := c.opts.WarnClusters > 0 && n > c.opts.WarnClusters
	over = over || (c.opts.WarnPercent > 0 && n*100 > c.opts.WarnPercent*total)
	if !over {
		return nil
	}
	return []Warning{{Kind: WarnManyClusters, Message: fmt.Sprintf(
		"the change affects %s of %d at once (%d%%): consider rolling it out in steps", plural(n, "cluster"), s.Clusters, n*100/total)}}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
