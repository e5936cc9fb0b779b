package classify

import (
	"fmt"
	"testing"

	"github.com/regatta-dev/regatta/spec"
)

// TestFacts builds a cluster's facts offline: version classifiers by the
// version, deployed-resource classifiers as recorded (or skipped), the
// cluster's own labels winning, values from cluster.yaml.
func TestFacts(t *testing.T) {
	c := &spec.Cluster{Metadata: spec.ObjectMeta{Name: "prod-1", Labels: map[string]string{"env": "prod", "size": "own"}},
		Spec: spec.ClusterSpec{Values: map[string]any{"region": "eu"}}}
	cs := []*spec.Classifier{
		classifier("v1-37", map[string]string{"kubernetes": "v1-37"}, []spec.VersionConstraint{{Comparison: spec.CompareGreaterThanOrEqualTo, Version: "1.37.0"}}, nil),
		classifier("old", map[string]string{"old": "yes"}, []spec.VersionConstraint{{Comparison: spec.CompareLessThan, Version: "1.30.0"}}, nil),
		classifier("large", map[string]string{"size": "large", "big": "yes"}, nil, &spec.DeployedResourceConstraint{}),
		classifier("gpu", map[string]string{"gpu": "yes"}, nil, &spec.DeployedResourceConstraint{}),
	}
	facts, skipped := Facts(c, "v1.37.2", cs, nil)
	if got := fmt.Sprint(facts.Labels); got != "map[env:prod kubernetes:v1-37 size:own]" {
		t.Errorf("offline labels %s", got)
	}
	if fmt.Sprint(skipped) != "[large gpu]" || facts.Name != "prod-1" || facts.KubernetesVersion != "v1.37.2" || facts.Values["region"] != "eu" {
		t.Errorf("facts %+v, skipped %v", facts, skipped)
	}
	facts, skipped = Facts(c, "v1.37.2", cs, func(cl *spec.Classifier) (bool, bool) { return cl.Metadata.Name == "large", true })
	if got := fmt.Sprint(facts.Labels); got != "map[big:yes env:prod kubernetes:v1-37 size:own]" || skipped != nil {
		t.Errorf("recorded labels %s, skipped %v", got, skipped)
	}
}
