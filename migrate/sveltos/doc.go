// Package sveltos imports Project Sveltos manifests into a regatta fleet:
// ClusterProfiles and Profiles into profiles (policyRefs, helmCharts and
// kustomizationRefs into add-ons, validateHealths into health checks),
// Classifiers into classifiers, SveltosClusters and Cluster API Clusters
// into clusters, ClusterHealthChecks into alerts (with the Lua HealthChecks they
// reference as the alerts' healthChecks). The ConfigMaps and Secrets the profiles reference are
// given as files too; their manifests are written into the fleet. What
// does not map goes into the report with its file and line.
package sveltos

// Kinds the importer reads.
const (
	kindClusterProfile = "ClusterProfile"
	kindProfile        = "Profile"
	kindClassifier     = "Classifier"
	kindSveltosCluster = "SveltosCluster"
	kindCAPICluster    = "Cluster"
	// policiesDir is where manifests taken out of ConfigMaps and Secrets go.
	policiesDir = "sveltos-policies"
	// templateAnnotation marks a ConfigMap or Secret whose content Sveltos
	// renders as a template.
	templateAnnotation = "projectsveltos.io/template"
	// sourceDir is the fleet folder --source is copied into.
	sourceDir = "sveltos-source"
	// instantiateAnnotation marks a policy an EventTrigger instantiates.
	instantiateAnnotation = "projectsveltos.io/instantiate"
	// luaAnnotation marks a ConfigMap or Secret holding Lua whose
	// evaluate() returns the resources to deploy.
	luaAnnotation = "projectsveltos.io/lua"
)
