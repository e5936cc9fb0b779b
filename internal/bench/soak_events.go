package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// The soak's event profile: a ConfigMap labelled soakEventLabel in a
// cluster's namespace is an event of the EventSource soakEventSource; the
// profile soakEventProfile deploys one ConfigMap (labelled
// soakInstanceLabel, its data naming the source) per event while it lasts.
const (
	soakEventSource   = "soak"
	soakEventProfile  = "fe"
	soakEventLabel    = "bench.regatta.dev/event"
	soakInstanceLabel = "bench.regatta.dev/instance"
)

// soakEventFiles are the event source, the event profile and its template.
func soakEventFiles() map[string]string {
	return map[string]string{
		"events/" + soakEventSource + ".yaml": fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: EventSource\nmetadata: {name: %s}\n"+
			"spec:\n  resourceSelectors:\n    - {group: \"\", version: v1, kind: ConfigMap, labelFilters: [{key: %s, operation: Equal, value: \"true\"}]}\n",
			soakEventSource, soakEventLabel),
		"profiles/" + soakEventProfile + ".yaml": fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: %s}\nspec:\n"+
			"  clusterSelector: {matchLabels: {bench: fleet}}\n  eventTrigger: {eventSourceName: %s, oneForEvent: true}\n"+
			"  addons:\n  - name: app\n    template: true\n    manifests: {path: fleet/%s}\n", soakEventProfile, soakEventSource, soakEventProfile),
		"fleet/" + soakEventProfile + "/instance.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n"+
			"  name: \"ev-{{ .Event.Name }}\"\n  namespace: \"s-{{ .Cluster.Name }}\"\n  labels: {%s: \"true\"}\n"+
			"data:\n  source: \"{{ .Event.Resource.metadata.name }}\"\n", soakInstanceLabel),
	}
}

// SoakEvents are the event resources the soak created and deleted, the
// instances regatta deployed and removed for them (within a minute each),
// and how fast.
type SoakEvents struct {
	Created    int     `json:"created"`
	Deployed   int     `json:"instancesDeployed"`
	Removed    int     `json:"instancesRemoved"`
	Skipped    int     `json:"skipped"`
	DeployP50  float64 `json:"deployP50Seconds"`
	DeployMax  float64 `json:"deployMaxSeconds"`
	RemoveP50  float64 `json:"removeP50Seconds"`
	RemoveMax  float64 `json:"removeMaxSeconds"`
	deploySecs []float64
	removeSecs []float64
	perCluster map[string]float64
}

// events creates an event resource on a random cluster every
// o.EventEvery, waits for regatta's instance, deletes the resource and
// waits for the instance to go.
func (s *soakRun) events(ctx context.Context) {
	p := s.newPicker(2)
	s.every(ctx, s.o.EventEvery, func(k int) { s.eventOne(ctx, p, k) })
}

// eventOne is one event's life on a random cluster of the fleet.
func (s *soakRun) eventOne(ctx context.Context, p *picker, k int) {
	name, cms, up := p.pick()
	src := fmt.Sprintf("soak-event-%d", k)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: src, Labels: map[string]string{soakEventLabel: "true"}}}
	if !up {
		s.countEvents(func(e *SoakEvents) { e.Skipped++ })
		return
	}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		s.countEvents(func(e *SoakEvents) { e.Skipped++ })
		return
	}
	s.countEvents(func(e *SoakEvents) { e.Created++; e.perCluster[name] += 2 })
	instance := func(want bool) (float64, bool) { return waitInstance(ctx, cms, src, want, time.Minute) }
	if secs, ok := instance(true); ok {
		s.countEvents(func(e *SoakEvents) { e.Deployed++; e.deploySecs = append(e.deploySecs, secs) })
	}
	if err := cms.Delete(context.WithoutCancel(ctx), src, metav1.DeleteOptions{}); err != nil {
		return
	}
	if secs, ok := instance(false); ok {
		s.countEvents(func(e *SoakEvents) { e.Removed++; e.removeSecs = append(e.removeSecs, secs) })
	}
}

// waitInstance polls until an instance of source exists (want) or none
// does, within; it returns the seconds it took.
func waitInstance(ctx context.Context, cms typedcorev1.ConfigMapInterface, source string, want bool, within time.Duration) (float64, bool) {
	begin := time.Now()
	for time.Since(begin) < within && ctx.Err() == nil {
		list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: soakInstanceLabel + "=true"})
		if err == nil && slices.ContainsFunc(list.Items, func(c corev1.ConfigMap) bool { return c.Data["source"] == source }) == want {
			return time.Since(begin).Seconds(), true
		}
		_ = sleepCtx(ctx, 200*time.Millisecond)
	}
	return 0, false
}

func (s *soakRun) countEvents(fn func(*SoakEvents)) {
	s.res.mu.Lock()
	defer s.res.mu.Unlock()
	fn(&s.res.EventRes)
}

// summarize fills the times' p50 and maximum.
func (e *SoakEvents) summarize() {
	if len(e.deploySecs) > 0 {
		e.DeployP50, e.DeployMax = Quantile(slices.Clone(e.deploySecs), .5), Quantile(slices.Clone(e.deploySecs), 1)
	}
	if len(e.removeSecs) > 0 {
		e.RemoveP50, e.RemoveMax = Quantile(slices.Clone(e.removeSecs), .5), Quantile(slices.Clone(e.removeSecs), 1)
	}
}

// eventCheck: every event's instance was deployed and removed.
func eventCheck(e SoakEvents) SoakCheck {
	return SoakCheck{Name: "every event deployed and withdrawn", OK: e.Created > 0 && e.Deployed == e.Created && e.Removed == e.Created,
		Detail: fmt.Sprintf("%d event resources created and deleted; instances deployed %d (p50 %.2fs, max %.2fs), removed %d (p50 %.2fs, max %.2fs) within a minute each; %d skipped (server down)",
			e.Created, e.Deployed, e.DeployP50, e.DeployMax, e.Removed, e.RemoveP50, e.RemoveMax, e.Skipped)}
}
