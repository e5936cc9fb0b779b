package bench

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The fleet phase (issue 37): N logical clusters on a few real
// kube-apiservers. Each logical cluster is a namespace-scoped cluster entry
// (spec.namespaces) reaching its API server through a loopback address of
// its own (127.a.b.c: its own client, connections, discovery and watches)
// with a ServiceAccount token RBAC limits to its namespace. Two profiles
// select every cluster: "fa" (ContinuousWithDriftDetection, templated
// manifests) and "fb" (Kustomize, the namespace substituted by postBuild).
// Each profile renders a marker ConfigMap whose generation tells the
// bench's watches that the cluster has the revision.

// Fleet phase profile names and the marker ConfigMap each renders.
const (
	FleetDriftProfile     = "fa"
	FleetKustomizeProfile = "fb"
	fleetMarkerSuffix     = "-marker"
	fleetLabel            = "bench.regatta.dev/fleet"
	// fleetMarkerLabel marks the marker ConfigMaps the bench watches.
	fleetMarkerLabel = "bench.regatta.dev/marker"
)

// FleetProfiles are the fleet phase's profiles.
var FleetProfiles = []string{FleetDriftProfile, FleetKustomizeProfile}

// FleetMarker is the name of profile's marker ConfigMap.
func FleetMarker(profile string) string { return profile + fleetMarkerSuffix }

// LogicalHost is the loopback address of the i-th logical cluster:
// 127.a.b.c with a from 1, b and c from 1 to 250, so none is 127.0.0.x
// (the API servers' own address and the tests' 127.0.0.2-7) and no octet
// is 0 or 255. It holds 250×250×254 clusters.
func LogicalHost(i int) string {
	const per = 250
	return fmt.Sprintf("127.%d.%d.%d", 1+i/(per*per), 1+(i/per)%per, 1+i%per)
}

// LogicalName is the name of the i-th logical cluster.
func LogicalName(i int) string { return fmt.Sprintf("l%05d", i) }

// LogicalNamespace is the one namespace of a logical cluster.
func LogicalNamespace(cluster string) string { return "s-" + cluster }

// ServerOf is the API server (0..servers-1) the i-th logical cluster
// lives on: round robin, so every server holds n/servers ± 1.
func ServerOf(i, servers int) int { return i % servers }

// ServersFor is how many API servers n logical clusters need at perServer
// clusters each (at least one).
func ServersFor(n, perServer int) int {
	if perServer <= 0 || n <= 0 {
		return 1
	}
	return (n + perServer - 1) / perServer
}

// ScaleFleet is the fleet phase's repository: clusters and two profiles of
// Objects objects each.
type ScaleFleet struct {
	Clusters []string
	// Objects per profile, the marker included (at least 1).
	Objects int
}

// Files is the repository at a generation of profile fa (a fleet-wide
// one-line change bumps it); withProfiles false leaves the profiles out
// (the clusters alone, so regatta connects before the first rollout).
func (f ScaleFleet) Files(generation int, withProfiles bool) map[string]string {
	files := map[string]string{}
	for _, c := range f.Clusters {
		files["clusters/"+c+"/cluster.yaml"] = fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Cluster\n"+
			"metadata:\n  name: %s\n  labels: {bench: fleet}\nspec:\n  namespaces: [%s]\n", c, LogicalNamespace(c))
	}
	if !withProfiles {
		return files
	}
	files["profiles/"+FleetDriftProfile+".yaml"] = profileDoc(FleetDriftProfile, "ContinuousWithDriftDetection",
		"  - name: app\n    template: true\n    manifests: {path: fleet/fa}\n")
	files["profiles/"+FleetKustomizeProfile+".yaml"] = profileDoc(FleetKustomizeProfile, "Continuous",
		"  - name: app\n    kustomize: {path: fleet/fb}\n    postBuild:\n      substitute: {ns: \"s-{{ .Cluster.Name }}\"}\n")
	files["fleet/fa/objects.yaml"] = fleetObjects(FleetDriftProfile, "\"s-{{ .Cluster.Name }}\"", generation, f.Objects)
	files["fleet/fb/kustomization.yaml"] = "resources: [objects.yaml]\n"
	files["fleet/fb/objects.yaml"] = fleetObjects(FleetKustomizeProfile, "${ns}", 0, f.Objects)
	return files
}

// fluxFleetPath is the folder of the Flux method's artifact that every
// cluster's Kustomization builds.
const fluxFleetPath = "fleet"

// FluxFiles is the Flux method's artifact at a generation of profile fa:
// one Kustomize folder holding both profiles' objects with the namespace
// left to each cluster's Kustomization (postBuild substitutes ${ns}, as
// regatta's fb profile does; fa's template {{ .Cluster.Name }} becomes the
// same substitution). Every cluster builds the same folder, so the
// artifact does not grow with the fleet. withProfiles false is the folder
// building nothing (the Kustomizations connect before the first rollout).
func (f ScaleFleet) FluxFiles(generation int, withProfiles bool) map[string]string {
	if !withProfiles {
		return map[string]string{fluxFleetPath + "/kustomization.yaml": "resources: []\n"}
	}
	return map[string]string{
		fluxFleetPath + "/kustomization.yaml":                 "resources: [" + FleetDriftProfile + ".yaml, " + FleetKustomizeProfile + ".yaml]\n",
		fluxFleetPath + "/" + FleetDriftProfile + ".yaml":     fleetObjects(FleetDriftProfile, "${ns}", generation, f.Objects),
		fluxFleetPath + "/" + FleetKustomizeProfile + ".yaml": fleetObjects(FleetKustomizeProfile, "${ns}", 0, f.Objects),
	}
}

func profileDoc(name, mode, addons string) string {
	return fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: %s}\nspec:\n"+
		"  clusterSelector: {matchLabels: {bench: fleet}}\n  syncMode: %s\n  addons:\n%s", name, mode, addons)
}

// fleetObjects are a profile's objects in namespace ns: the marker
// ConfigMap (its generation on a line of its own: the one-line change),
// then ConfigMaps, a ServiceAccount and a Secret in turn.
func fleetObjects(profile, ns string, generation, objects int) string {
	labels := fmt.Sprintf("  labels: {%s: %q}\n", fleetLabel, profile)
	docs := []string{fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n"+
		"  labels: {%s: %q, %s: \"true\"}\ndata:\n  generation: \"%d\"\n",
		FleetMarker(profile), ns, fleetLabel, profile, fleetMarkerLabel, generation)}
	for i := 1; i < objects; i++ {
		switch i % 3 {
		case 1:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-config-%02d\n  namespace: %s\n%sdata:\n  key: %q\n",
				profile, i, ns, labels, strings.Repeat("value ", 32)))
		case 2:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: %s-sa-%02d\n  namespace: %s\n%s", profile, i, ns, labels))
		default:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s-secret-%02d\n  namespace: %s\n%stype: Opaque\nstringData: {token: bench}\n",
				profile, i, ns, labels))
		}
	}
	return strings.Join(docs, "---\n")
}

// Latency sums up per-cluster times from a commit to the cluster having
// it: p50, p99 and the last cluster, in seconds; Missing counts clusters
// that never got it within the wait.
type Latency struct {
	Clusters int     `json:"clusters"`
	P50      float64 `json:"p50Seconds"`
	P99      float64 `json:"p99Seconds"`
	Last     float64 `json:"lastSeconds"`
	Missing  int     `json:"missing,omitempty"`
}

// NewLatency sums up the times of want clusters (those missing from
// times never arrived).
func NewLatency(times []time.Duration, want int) Latency {
	xs := make([]float64, len(times))
	for i, d := range times {
		xs[i] = d.Seconds()
	}
	l := Latency{Clusters: len(times), Missing: max(0, want-len(times))}
	if len(xs) == 0 {
		return l // zeros: JSON has no NaN; Missing says why
	}
	l.P50, l.P99, l.Last = Quantile(xs, .5), Quantile(xs, .99), Quantile(xs, 1)
	return l
}

// Slope is the least-squares slope of ys over xs (NaN for fewer than two
// distinct xs): bytes per cluster from the memory at several fleet sizes.
func Slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if len(xs) != len(ys) || len(xs) < 2 {
		return math.NaN()
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return math.NaN()
	}
	return (n*sxy - sx*sy) / d
}
