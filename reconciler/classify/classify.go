// Package classify evaluates the repository's classifiers against one live
// cluster: its Kubernetes version and the objects it holds. Each selected
// kind is listed once per cluster and pass, however many classifiers select it.
package classify

import (
	"context"
	"fmt"
	"sort"

	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/spec"
)

// Lister lists the objects of one kind, in one namespace or all ("").
type Lister interface {
	List(ctx context.Context, group, version, kind, namespace string) ([]map[string]any, error)
}

// Evaluator runs classification Lua: evaluate() over one object (obj) or
// over all selected objects (resources). name locates the script in errors.
type Evaluator interface {
	EvaluateObject(ctx context.Context, name, script string, obj map[string]any) (bool, error)
	EvaluateAggregated(ctx context.Context, name, script string, resources []map[string]any) (bool, error)
}

// Result is the outcome of classifying one cluster.
type Result struct {
	// Matched are the matching classifiers and their labels, by name.
	Matched []plan.Classified
	// Errors are classifiers that could not be evaluated; they neither
	// match nor withdraw anything.
	Errors []*Error
}

// Error is a classifier that could not be evaluated on a cluster.
type Error struct {
	Classifier string
	Err        error
}

func (e *Error) Error() string { return "classifier " + e.Classifier + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Classify evaluates every classifier for a cluster reporting version.
func Classify(ctx context.Context, version string, l Lister, ev Evaluator, cs []*spec.Classifier) Result {
	var r Result
	lists := &listCache{l: l, got: map[listKey]listResult{}}
	for _, c := range cs {
		ok, err := matches(ctx, version, lists, ev, c)
		if err != nil {
			r.Errors = append(r.Errors, &Error{Classifier: c.Metadata.Name, Err: err})
			continue
		}
		if ok {
			r.Matched = append(r.Matched, plan.Classified{Classifier: c.Metadata.Name, Labels: c.Spec.ClassifierLabels})
		}
	}
	sort.Slice(r.Matched, func(i, j int) bool { return r.Matched[i].Classifier < r.Matched[j].Classifier })
	return r
}

func matches(ctx context.Context, version string, lists *listCache, ev Evaluator, c *spec.Classifier) (bool, error) {
	if len(c.Spec.KubernetesVersionConstraints) > 0 {
		ok, err := VersionMatches(version, c.Spec.KubernetesVersionConstraints)
		if err != nil || !ok {
			return false, err
		}
	}
	if d := c.Spec.DeployedResourceConstraint; d != nil {
		return resourcesMatch(ctx, lists, ev, c, d)
	}
	return true, nil
}

// VersionMatches reports whether a cluster version satisfies every constraint.
func VersionMatches(version string, cs []spec.VersionConstraint) (bool, error) {
	v, err := spec.ParseVersion(version)
	if err != nil {
		return false, fmt.Errorf("cluster version %q: %w", version, err)
	}
	for _, c := range cs {
		want, err := spec.ParseVersion(c.Version)
		if err != nil {
			return false, fmt.Errorf("constraint version %q: %w", c.Version, err)
		}
		cmp := v.Compare(want)
		ok := map[string]bool{
			spec.CompareEqual: cmp == 0, spec.CompareNotEqual: cmp != 0,
			spec.CompareGreaterThan: cmp > 0, spec.CompareGreaterThanOrEqualTo: cmp >= 0,
			spec.CompareLessThan: cmp < 0, spec.CompareLessThanOrEqualTo: cmp <= 0,
		}[c.Comparison]
		if !ok {
			return false, nil
		}
	}
	return true, nil
}
