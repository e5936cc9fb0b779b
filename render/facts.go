package render

import "github.com/regatta-dev/regatta/spec"

// FactsOf returns the facts of a fleet cluster for its renders: name,
// values and decryption keys from its cluster.yaml, with the effective
// labels and the Kubernetes version the caller found (live, from the
// status branch, or from flags). The daemon, `regatta render` and
// `regatta plan` all build facts here.
func FactsOf(c *spec.Cluster, labels map[string]string, version string) ClusterFacts {
	return ClusterFacts{
		Name:              c.Metadata.Name,
		Labels:            labels,
		Values:            c.Spec.Values,
		KubernetesVersion: version,
		Decryption:        c.Spec.Decryption,
	}
}
