package notify

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// firing is one subject of one alert as the fleet shows it now.
type firing struct {
	alert   string
	subject subject
	// clusters touched, sorted; empty for the fleet's own happenings.
	clusters []string
	details  []string // the first errors, one per cluster, in cluster order
	stage    string
}

// key names a firing subject of an alert in the ledger.
func key(alert string, s subject) string {
	return alert + "|" + s.Kind + "|" + s.Profile + "|" + s.Revision
}

// memory is what evaluate carries from one snapshot to the next: when
// each cluster was first seen unreachable and the drift corrections and
// event instances seen last.
type memory struct {
	unreachableSince map[string]time.Time
	corrected        map[string]int64    // cluster/profile → corrections
	instances        map[string][]string // cluster/profile → instances
	// degraded are each cluster's health check happenings as it was last
	// reached: a record of a cluster not reached (its checks did not run)
	// keeps them, so an outage resolves nothing.
	degraded map[string][]happening
	primed   bool // a snapshot was read: counters are compared from then on
}

func newMemory() *memory {
	return &memory{unreachableSince: map[string]time.Time{}, corrected: map[string]int64{}, instances: map[string][]string{},
		degraded: map[string][]happening{}}
}

// maxDetails is how many first errors a message names.
const maxDetails = 3

// evaluate returns what fires now for each alert, by key.
func evaluate(alerts []*spec.Alert, snap status.Snapshot, mem *memory, now time.Time) map[string]*firing {
	happenings := fleetHappenings(snap.Fleet)
	labelsOf := map[string]map[string]string{}
	before := primedCounters(mem)
	for _, c := range snap.Clusters {
		labelsOf[c.Cluster] = c.Labels
		happenings = append(happenings, clusterHappenings(c, before, mem, now)...)
	}
	mem.primed = true
	out := map[string]*firing{}
	for _, a := range alerts {
		if a.Spec.Suspend {
			continue
		}
		sel, err := selectorOf(a.Spec.ClusterSelector)
		if err != nil {
			continue // validated at load
		}
		for _, h := range happenings {
			if !watches(a, h, sel, labelsOf, mem, now) {
				continue
			}
			k := key(a.ID(), h.subject())
			f := out[k]
			if f == nil {
				f = &firing{alert: a.ID(), subject: h.subject(), stage: h.stage}
				out[k] = f
			}
			if h.cluster != "" {
				f.clusters = append(f.clusters, h.cluster)
			}
			if h.detail != "" && len(f.details) < maxDetails {
				f.details = append(f.details, prefixed(h.cluster, h.detail))
			}
		}
	}
	for _, f := range out {
		sort.Strings(f.clusters)
	}
	return out
}

func prefixed(cluster, detail string) string {
	if cluster == "" {
		return detail
	}
	return cluster + ": " + detail
}

// watches reports whether the alert takes the happening: its kind, its
// profile and its cluster's labels; a cluster unreachable only once it has
// been for the alert's unreachableFor.
func watches(a *spec.Alert, h happening, sel labels.Selector, labelsOf map[string]map[string]string, mem *memory, now time.Time) bool {
	if !a.Spec.Watches(h.kind) || (h.alert != "" && h.alert != a.ID()) {
		return false
	}
	if t := a.Tenant(); t != nil && !tenantSees(t, h, labelsOf) {
		return false
	}
	if h.profile != "" && h.alert == "" && !strings.HasPrefix(h.profile, "tenant:") && !a.WatchesProfile(h.profile) {
		return false
	}
	if h.cluster != "" && !sel.Matches(labels.Set(labelsOf[h.cluster])) {
		return false
	}
	if h.kind == spec.AlertOnUnreachable {
		return now.Sub(mem.unreachableSince[h.cluster]) >= a.Spec.UnreachableAfter()
	}
	return true
}

// tenantSees reports whether a tenant's alert may tell of a happening: of
// its own profiles (WatchesProfile), on clusters it may reach, and of the
// fleet only its own refusal, never the platform's.
func tenantSees(t *spec.Tenant, h happening, labelsOf map[string]map[string]string) bool {
	if h.cluster != "" && !t.AllowsCluster(h.cluster, labelsOf[h.cluster]) {
		return false
	}
	if h.kind == spec.AlertOnRevisionRefused {
		return h.profile == "tenant:"+t.Name()
	}
	return h.profile != "" || h.cluster != ""
}

// clusterHappenings reads one cluster record: its pairs, whether it is
// reachable (and since when not), its agent gone silent, its event
// instances created or withdrawn.
func clusterHappenings(c status.ClusterStatus, corrected map[string]int64, mem *memory, now time.Time) []happening {
	out := pairHappenings(c, corrected)
	if !c.Reachable && !c.Paused && c.Error != "" && c.Handover == nil {
		since, ok := mem.unreachableSince[c.Cluster]
		if !ok {
			since = now
			mem.unreachableSince[c.Cluster] = since
		}
		kind := spec.AlertOnUnreachable
		if c.Mode == spec.ModePull {
			kind = spec.AlertOnAgentSilent
		}
		out = append(out, happening{kind: kind, cluster: c.Cluster, revision: "", detail: c.Error})
	} else {
		delete(mem.unreachableSince, c.Cluster)
	}
	out = append(out, degradedHappenings(c, mem)...)
	for _, p := range c.Profiles {
		mem.corrected[c.Cluster+"/"+p.Name] = p.DriftCorrections
	}
	for profile, names := range eventInstances(c) {
		k := c.Cluster + "/" + profile
		if before, seen := mem.instances[k]; (seen || mem.primed) && !slices.Equal(before, names) {
			out = append(out, happening{kind: spec.AlertOnEventInstance, profile: profile, cluster: c.Cluster,
				revision: c.SourceRevision, detail: instanceChange(before, names)})
		}
		mem.instances[k] = names
	}
	return out
}

// degradedHappenings are the cluster's health check happenings: those of
// its record when it was reached, else those it had when last reached.
func degradedHappenings(c status.ClusterStatus, mem *memory) []happening {
	if !c.Reachable {
		return mem.degraded[c.Cluster]
	}
	hs := healthHappenings(c)
	if len(hs) == 0 {
		delete(mem.degraded, c.Cluster)
	} else {
		mem.degraded[c.Cluster] = hs
	}
	return hs
}

// primedCounters are the drift corrections seen last, once a snapshot was
// read (the first snapshot after a start only primes them).
func primedCounters(mem *memory) map[string]int64 {
	if !mem.primed {
		return nil
	}
	out := make(map[string]int64, len(mem.corrected))
	for k, v := range mem.corrected {
		out[k] = v
	}
	return out
}

// instanceChange says which instances were created and withdrawn.
func instanceChange(before, after []string) string {
	was := map[string]bool{}
	for _, n := range before {
		was[n] = true
	}
	var created, gone []string
	for _, n := range after {
		if !was[n] {
			created = append(created, n)
		}
		delete(was, n)
	}
	for n := range was {
		gone = append(gone, n)
	}
	sort.Strings(gone)
	msg := ""
	if len(created) > 0 {
		msg = "created " + join(created)
	}
	if len(gone) > 0 {
		if msg != "" {
			msg += "; "
		}
		msg += "withdrawn " + join(gone)
	}
	return msg
}

// selectorOf compiles an alert's cluster selector: empty selects every
// cluster (a profile's selects none).
func selectorOf(s spec.LabelSelector) (labels.Selector, error) {
	if s.IsEmpty() {
		return labels.Everything(), nil
	}
	return s.Compile()
}

func join(names []string) string {
	const max = 5
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}
