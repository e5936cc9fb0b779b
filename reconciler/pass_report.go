package reconciler

import (
	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// effective records the effective labels and classifier labels in the status.
func (p *clusterPass) effective(k knownCluster, stale bool) map[string]string {
	classified := make([]plan.Classified, 0, len(k.classified))
	p.st.ClassifierLabels = nil
	for _, c := range sortedClassified(k.classified) {
		classified = append(classified, c)
		if p.st.ClassifierLabels == nil {
			p.st.ClassifierLabels = map[string]map[string]string{}
		}
		p.st.ClassifierLabels[c.Classifier] = c.Labels
	}
	labels, notes := plan.EffectiveLabels(p.spec.Metadata.Labels, classified)
	p.st.Labels, p.st.ClassifierLabelsStale = labels, stale
	p.st.LabelNotes = nil
	for _, n := range notes {
		p.st.LabelNotes = append(p.st.LabelNotes, status.LabelNote{Key: n.Key, Reason: n.Reason, Message: n.Message})
	}
	return labels
}

// unreachable reports a cluster that could not be reached: its profiles
// (matched with the last known labels) are Failed and nothing is changed.
func (p *clusterPass) unreachable(err error) {
	p.log.Warn("cluster unreachable; nothing changed there", "error", err)
	p.retry = true
	p.st.Reachable, p.st.Error = false, err.Error()
	p.r.opts.Metrics.ClusterReachable.WithLabelValues(p.spec.Metadata.Name).Set(0)
	p.reportKnown(true, status.Profile{State: status.StateFailed,
		Error: &status.Error{Message: "cluster unreachable: " + err.Error()}})
}

// paused reports every profile the cluster's labels select as Paused.
func (p *clusterPass) paused() {
	p.st.Paused = true
	p.r.opts.Apply.Forget(p.spec.Metadata.Name) // no drift correction either
	p.reportKnown(false, status.Profile{State: status.StatePaused, Message: "cluster is paused (spec.paused)"})
}

// reportKnown gives every profile that selects the cluster, by its last
// known labels (stale when the cluster could not be read), the record rec.
func (p *clusterPass) reportKnown(stale bool, rec status.Profile) {
	p.r.mu.Lock()
	k := p.r.known[p.spec.Metadata.Name]
	p.r.mu.Unlock()
	p.st.KubernetesVersion = k.version
	labels := p.effective(k, stale && len(k.classified) > 0)
	a := plan.Match(p.rev.repo.Profiles, plan.Cluster{Name: p.spec.Metadata.Name, Labels: labels})
	for _, prof := range a.Profiles() {
		r := rec
		r.Name = prof.Metadata.Name
		p.setResult(r)
	}
	p.st.Profiles = p.sortedResults()
}
