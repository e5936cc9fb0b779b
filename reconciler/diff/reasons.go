package diff

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/regatta-dev/regatta/spec"
)

// reasons explains why the entry's cluster gains or loses a profile.
func (c *comparison) reasons(e *entry, profile string) []Reason {
	switch e.change {
	case ClusterAdded:
		return []Reason{{Kind: ReasonClusterAdded, Message: "the cluster is new"}}
	case ClusterRemoved:
		return []Reason{{Kind: ReasonClusterRemoved, Message: "the cluster is removed from the repository"}}
	}
	bp, hp := c.base.Fleet.Profile(profile), c.head.Fleet.Profile(profile)
	switch {
	case bp == nil:
		return []Reason{{Kind: ReasonProfileAdded, Message: "the profile is new"}}
	case hp == nil:
		return []Reason{{Kind: ReasonProfileRemoved, Message: "the profile is removed from the repository"}}
	}
	var out []Reason
	out = append(out, refsReason(bp, hp, e.cluster)...)
	out = append(out, selectorReason(bp, hp)...)
	out = append(out, c.labelReasons(e.cluster, bp, hp)...)
	if len(out) == 0 {
		out = append(out, Reason{Kind: ReasonSelectorChanged, Message: "the profile's selection changed"})
	}
	return out
}

func refsReason(bp, hp *spec.Profile, cluster string) []Reason {
	inBase, inHead := slices.Contains(bp.Spec.ClusterRefs, cluster), slices.Contains(hp.Spec.ClusterRefs, cluster)
	switch {
	case inHead && !inBase:
		return []Reason{{Kind: ReasonRefsChanged, Message: "clusterRefs now lists the cluster"}}
	case inBase && !inHead:
		return []Reason{{Kind: ReasonRefsChanged, Message: "clusterRefs no longer lists the cluster"}}
	}
	return nil
}

func selectorReason(bp, hp *spec.Profile) []Reason {
	b, h := bp.Spec.ClusterSelector, hp.Spec.ClusterSelector
	if reflect.DeepEqual(b, h) {
		return nil
	}
	return []Reason{{Kind: ReasonSelectorChanged,
		Message: fmt.Sprintf("clusterSelector changed: %s → %s", formatSelector(b), formatSelector(h))}}
}

// formatSelector writes a selector as kubectl does (env=prod,tier in (a,b)).
func formatSelector(s spec.LabelSelector) string {
	if s.IsEmpty() {
		return "(none)"
	}
	sel, err := s.Compile()
	if err != nil {
		return "(invalid)"
	}
	return sel.String()
}

// labelReasons lists the changed labels that either selector looks at.
func (c *comparison) labelReasons(cluster string, bp, hp *spec.Profile) []Reason {
	keys := map[string]bool{}
	for _, k := range append(bp.Spec.ClusterSelector.Keys(), hp.Spec.ClusterSelector.Keys()...) {
		keys[k] = true
	}
	bl, hl := c.base.facts[cluster].Labels, c.head.facts[cluster].Labels
	var out []Reason
	for _, k := range sortedKeys(keys) {
		bv, bok := bl[k]
		hv, hok := hl[k]
		if bv == hv && bok == hok {
			continue
		}
		r := Reason{Kind: ReasonLabelChanged, Label: k, From: &Value{bv, bok}, To: &Value{hv, hok}}
		r.Message = labelMessage(k, r.From, r.To) + c.labelOrigin(cluster, k)
		out = append(out, r)
	}
	return out
}

func labelMessage(key string, from, to *Value) string {
	switch {
	case !from.Present:
		return fmt.Sprintf("label %s=%s added", key, to.Value)
	case !to.Present:
		return fmt.Sprintf("label %s=%s removed", key, from.Value)
	}
	return fmt.Sprintf("label %s changed: %s → %s", key, from.Value, to.Value)
}

// labelOrigin tells a change made in cluster.yaml from one made by
// classifiers.
func (c *comparison) labelOrigin(cluster, key string) string {
	bc, hc := c.base.Fleet.Cluster(cluster), c.head.Fleet.Cluster(cluster)
	bv, bok := bc.Metadata.Labels[key]
	hv, hok := hc.Metadata.Labels[key]
	if bv != hv || bok != hok {
		return ""
	}
	return " (classifier label)"
}
