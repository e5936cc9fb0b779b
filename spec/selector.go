package spec

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Label selector operators.
const (
	OpIn           = "In"
	OpNotIn        = "NotIn"
	OpExists       = "Exists"
	OpDoesNotExist = "DoesNotExist"
)

// IsEmpty reports whether the selector has no terms. An empty cluster
// selector selects no cluster: a profile opts clusters in explicitly.
func (s LabelSelector) IsEmpty() bool {
	return len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}

// Compile turns the selector into a labels.Selector. The empty selector
// compiles to labels.Nothing().
func (s LabelSelector) Compile() (labels.Selector, error) {
	if s.IsEmpty() {
		return labels.Nothing(), nil
	}
	sel := labels.NewSelector()
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r, err := labels.NewRequirement(k, selection.Equals, []string{s.MatchLabels[k]})
		if err != nil {
			return nil, fmt.Errorf("matchLabels.%s: %w", k, err)
		}
		sel = sel.Add(*r)
	}
	for i, e := range s.MatchExpressions {
		r, err := e.requirement()
		if err != nil {
			return nil, fmt.Errorf("matchExpressions[%d]: %w", i, err)
		}
		sel = sel.Add(*r)
	}
	return sel, nil
}

func (e LabelSelectorRequirement) requirement() (*labels.Requirement, error) {
	ops := map[string]selection.Operator{
		OpIn: selection.In, OpNotIn: selection.NotIn,
		OpExists: selection.Exists, OpDoesNotExist: selection.DoesNotExist,
	}
	op, ok := ops[e.Operator]
	if !ok {
		return nil, fmt.Errorf("operator %q is not one of In, NotIn, Exists, DoesNotExist", e.Operator)
	}
	return labels.NewRequirement(e.Key, op, e.Values)
}

// Keys returns the label keys the selector looks at.
func (s LabelSelector) Keys() []string {
	var out []string
	for k := range s.MatchLabels {
		out = append(out, k)
	}
	for _, e := range s.MatchExpressions {
		out = append(out, e.Key)
	}
	return out
}

// Matches reports whether the profile selects the cluster with the given
// name and effective labels: listed in clusterRefs, or matched by
// clusterSelector. It must be called on a profile returned by Load.
func (p *Profile) Matches(cluster string, lbls map[string]string) bool {
	if p.tenant != nil && !p.tenant.AllowsCluster(cluster, lbls) {
		return false // a tenant's profile never reaches another's cluster
	}
	return p.selects(cluster, lbls)
}

// selects is Matches without the tenant's restriction.
func (p *Profile) selects(cluster string, lbls map[string]string) bool {
	for _, r := range p.Spec.ClusterRefs {
		if r == cluster {
			return true
		}
	}
	return p.selector != nil && p.selector.Matches(labels.Set(lbls))
}

// Tier returns the profile's tier, defaulted.
func (p *Profile) Tier() int {
	if p.Spec.Tier == nil {
		return DefaultTier
	}
	return *p.Spec.Tier
}
