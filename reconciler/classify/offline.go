package classify

import (
	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// Recorded tells whether a classifier that looks at deployed resources
// matched a cluster, as an earlier live classification recorded it (the
// status branch); known is false when nothing was recorded.
type Recorded func(c *spec.Classifier) (matched, known bool)

// Facts builds a cluster's facts without reaching it, for `regatta render`
// and `regatta plan`: version classifiers evaluated with version;
// deployed-resource classifiers as recorded says (nil: none is known).
// Skipped names the deployed-resource classifiers nothing was known of.
// The daemon classifies live (Classify) and builds its facts from the
// same plan.EffectiveLabels and render.FactsOf.
func Facts(c *spec.Cluster, version string, cs []*spec.Classifier, recorded Recorded) (facts render.ClusterFacts, skipped []string) {
	var matched []plan.Classified
	for _, cl := range cs {
		if ok, err := VersionMatches(version, cl.Spec.KubernetesVersionConstraints); err != nil || !ok {
			continue
		}
		if cl.Spec.DeployedResourceConstraint != nil {
			ok, known := false, false
			if recorded != nil {
				ok, known = recorded(cl)
			}
			if !known {
				skipped = append(skipped, cl.Metadata.Name)
			}
			if !ok {
				continue
			}
		}
		matched = append(matched, plan.Classified{Classifier: cl.Metadata.Name, Labels: cl.Spec.ClassifierLabels})
	}
	labels, _ := plan.EffectiveLabels(c.Metadata.Labels, matched)
	return render.FactsOf(c, labels, version), skipped
}
