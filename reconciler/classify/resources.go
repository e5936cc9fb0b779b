package classify

import (
	"context"
	"fmt"

	"github.com/regatta-dev/regatta/spec"
)

type listKey struct{ group, version, kind, namespace string }

type listResult struct {
	objs []map[string]any
	err  error
}

// listCache lists each kind once per cluster and pass.
type listCache struct {
	l   Lister
	got map[listKey]listResult
}

func (c *listCache) list(ctx context.Context, k listKey) ([]map[string]any, error) {
	if r, ok := c.got[k]; ok {
		return r.objs, r.err
	}
	objs, err := c.l.List(ctx, k.group, k.version, k.kind, k.namespace)
	c.got[k] = listResult{objs, err}
	return objs, err
}

// resourcesMatch selects objects with every resource selector. Without an
// aggregated script the cluster matches when each selector selects at least
// one object; with one, the script decides over all selected objects.
func resourcesMatch(ctx context.Context, lists *listCache, ev Evaluator, c *spec.Classifier, d *spec.DeployedResourceConstraint) (bool, error) {
	var all []map[string]any
	everySelectorHit := true
	for i, rs := range d.ResourceSelectors {
		objs, err := lists.list(ctx, listKey{rs.Group, rs.Version, rs.Kind, rs.Namespace})
		if err != nil {
			return false, fmt.Errorf("list %s: %w", gvkString(rs), err)
		}
		name := fmt.Sprintf("%s spec.deployedResourceConstraint.resourceSelectors[%d].evaluate", c.Source.File, i)
		selected, err := selectObjects(ctx, ev, name, rs, objs)
		if err != nil {
			return false, err
		}
		everySelectorHit = everySelectorHit && len(selected) > 0
		all = append(all, selected...)
	}
	if d.AggregatedClassification == "" {
		return everySelectorHit, nil
	}
	name := c.Source.File + " spec.deployedResourceConstraint.aggregatedClassification"
	return ev.EvaluateAggregated(ctx, name, d.AggregatedClassification, all)
}

func selectObjects(ctx context.Context, ev Evaluator, name string, rs spec.ResourceSelector, objs []map[string]any) ([]map[string]any, error) {
	var out []map[string]any
	for _, o := range objs {
		if !labelsMatch(o, rs.LabelFilters) {
			continue
		}
		if rs.Evaluate != "" {
			ok, err := ev.EvaluateObject(ctx, name, rs.Evaluate, o)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// labelsMatch applies Sveltos-style label filters: Equal needs the label
// with that value; Different matches any other value or a missing label.
func labelsMatch(obj map[string]any, filters []spec.LabelFilter) bool {
	meta, _ := obj["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	for _, f := range filters {
		v, ok := labels[f.Key].(string)
		equal := ok && v == f.Value
		if (f.Operation == spec.LabelFilterEqual) != equal {
			return false
		}
	}
	return true
}

func gvkString(rs spec.ResourceSelector) string {
	gv := rs.Version
	if rs.Group != "" {
		gv = rs.Group + "/" + rs.Version
	}
	if rs.Namespace != "" {
		return fmt.Sprintf("%s %s in namespace %s", gv, rs.Kind, rs.Namespace)
	}
	return gv + " " + rs.Kind
}
