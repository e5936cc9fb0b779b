package spec

// Modes of spec.mode: how a cluster is reconciled.
const (
	// ModePush: the central daemon reaches the cluster with its
	// kubeconfig (or cloud credentials) and reconciles it. The default.
	ModePush = "push"
	// ModePull: an agent inside the cluster (`regatta run --cluster
	// NAME`) reconciles it with its own ServiceAccount; the central daemon
	// never writes to it and needs no credentials for it.
	ModePull = "pull"
)

// Pulled reports whether the cluster is reconciled by its own agent.
func (c *Cluster) Pulled() bool { return c.Spec.Mode == ModePull }

// validateMode checks spec.mode. A pulled cluster has no kubeconfig: its
// agent uses the in-cluster ServiceAccount, and the central daemon never
// reaches it, so spec.kubeconfig is refused rather than silently unused
// (the Secret manifests of its folder are never read).
func validateMode(rep report, c *Cluster, kubeconfigSet bool) {
	if c.Spec.Mode == "" {
		return
	}
	checkEnum(rep, "spec.mode", c.Spec.Mode, ModePush, ModePull)
	if c.Pulled() && kubeconfigSet {
		rep.errorf("spec.kubeconfig", "a pulled cluster (spec.mode: pull) is reconciled by its own agent with its in-cluster ServiceAccount: remove spec.kubeconfig (no kubeconfig Secret is needed anywhere)")
	}
}

// checkPulledEvents refuses cross-cluster event profiles
// (destinationClusterSelector) that watch or deliver to a pulled cluster:
// its agent sees only its own cluster, and the central daemon never
// reaches it, so no process could carry the event across. Clusters a
// classifier label makes match at run time are refused by the daemon.
func checkPulledEvents(r *Repository, diags *Diagnostics) {
	for _, p := range r.Profiles {
		t := p.Spec.EventTrigger
		if t == nil || !t.CrossCluster() || p.selector == nil {
			continue
		}
		for _, c := range r.Clusters {
			if !c.Pulled() {
				continue
			}
			if msg := PulledEventConflict(p, c.Metadata.Name, c.Metadata.Labels); msg != "" {
				report{src: &p.Source, diags: diags}.errorf("spec.eventTrigger.destinationClusterSelector", "%s", msg)
			}
		}
	}
}

// PulledEventConflict says why a cross-cluster event profile cannot
// involve the pulled cluster with the given name and labels, or "" when
// it does not involve it. It must be called on a profile returned by Load.
func PulledEventConflict(p *Profile, cluster string, lbls map[string]string) string {
	t := p.Spec.EventTrigger
	if t == nil || !t.CrossCluster() {
		return ""
	}
	switch {
	case p.WatchesCluster(cluster, lbls):
		return "cluster " + cluster + " is pulled (spec.mode: pull): cross-cluster event sources cannot watch it (its agent sees only its own cluster and reports to no other); use a local event profile (no destinationClusterSelector)"
	case p.Matches(cluster, lbls):
		return "cluster " + cluster + " is pulled (spec.mode: pull): cross-cluster event profiles cannot deliver to it (no process reaches it but its own agent); use a local event profile (no destinationClusterSelector)"
	}
	return ""
}
