package reconciler

import (
	"context"
	"errors"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/spec"
)

// alertCheck is one health check of one alert.
type alertCheck struct {
	alert *spec.Alert
	index int
}

// healthChecks runs the Lua health checks of the alerts that select the
// cluster and records their outcomes (status.ClusterStatus.HealthChecks).
// It runs once the pass's applies and withdrawals are done, under its
// own deadline (ClusterTimeout for all checks of the cluster), so it
// never delays an apply; a check that fails is recorded with its error
// and never stops the pass or the other checks.
func (p *clusterPass) healthChecks(ctx context.Context, lbls map[string]string) {
	checks := alertChecksFor(p.rev.repo.Alerts, p.spec.Metadata.Name, lbls)
	if len(checks) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, p.r.opts.ClusterTimeout)
	defer cancel()
	lists := map[healthListKey]healthList{}
	for _, c := range checks {
		rec := p.runHealthCheck(ctx, c, lists)
		if rec.Error != "" {
			p.log.Warn("alert health check failed", "alert", rec.Alert, "check", rec.Check, "error", rec.Error)
		}
		p.st.HealthChecks = append(p.st.HealthChecks, rec)
	}
}

// alertChecksFor lists the health checks of the alerts, not suspended,
// whose clusterSelector selects the cluster (and, for a tenant's alert,
// that the tenant may reach), in alert and check order.
func alertChecksFor(alerts []*spec.Alert, cluster string, lbls map[string]string) []alertCheck {
	var out []alertCheck
	for _, a := range alerts {
		if a.Spec.Suspend || len(a.Spec.HealthChecks) == 0 || !alertSelects(a, cluster, lbls) {
			continue
		}
		for i := range a.Spec.HealthChecks {
			out = append(out, alertCheck{alert: a, index: i})
		}
	}
	return out
}

func alertSelects(a *spec.Alert, cluster string, lbls map[string]string) bool {
	if t := a.Tenant(); t != nil && !t.AllowsCluster(cluster, lbls) {
		return false
	}
	if a.Spec.ClusterSelector.IsEmpty() {
		return true
	}
	sel, err := a.Spec.ClusterSelector.Compile()
	return err == nil && sel.Matches(labels.Set(lbls))
}

// runHealthCheck lists what one check selects and runs its script.
func (p *clusterPass) runHealthCheck(ctx context.Context, c alertCheck, lists map[healthListKey]healthList) status.HealthCheck {
	h := c.alert.Spec.HealthChecks[c.index]
	rec := status.HealthCheck{Alert: c.alert.ID(), Check: h.Name}
	if t := c.alert.Tenant(); t != nil {
		rec.Tenant = t.Name()
	}
	name, src, err := c.alert.HealthCheckScript(p.rev.tree, c.index)
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	var objs []map[string]any
	for j, rs := range h.ResourceSelectors {
		l := p.listForCheck(ctx, rs, c.alert.Tenant(), lists)
		if l.err != nil {
			rec.Error = fmt.Sprintf("%s spec.healthChecks[%d].resourceSelectors[%d]: list %s: %v", c.alert.Source.File, c.index, j, selectorString(rs), l.err)
			return rec
		}
		objs = append(objs, l.objs...)
		rec.Truncated = rec.Truncated || l.truncated
	}
	rec.Objects = len(objs)
	res, err := p.r.opts.Lua.CheckResources(ctx, lua.Script{Name: name, Source: src}, objs)
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	summarize(&rec, res)
	return rec
}

// summarize counts the Degraded resources and keeps the first resources
// that are not Healthy, Degraded first.
func summarize(rec *status.HealthCheck, res []lua.ResourceHealth) {
	var bad []lua.ResourceHealth
	for _, r := range res {
		if r.Status == lua.Degraded {
			rec.Degraded++
		}
		if r.Status != lua.Healthy {
			bad = append(bad, r)
		}
	}
	sort.SliceStable(bad, func(i, j int) bool { return bad[i].Status == lua.Degraded && bad[j].Status != lua.Degraded })
	for _, r := range bad[:min(len(bad), status.MaxHealthCheckResources)] {
		rec.Resources = append(rec.Resources, status.ResourceHealth{Object: r.String(), Status: string(r.Status), Message: r.Message})
	}
}

// healthListKey is one list a check asks for; checks that select alike
// (for the same tenant: each list is checked against its grant) share it
// within a pass.
type healthListKey struct {
	gv, kind, namespace, selector, tenant string
}

type healthList struct {
	objs      []map[string]any
	truncated bool
	err       error
}

// listForCheck lists what a resource selector selects, once per pass.
// A tenant's check lists only its kinds in its namespaces.
func (p *clusterPass) listForCheck(ctx context.Context, rs spec.HealthResourceSelector, t *spec.Tenant, lists map[healthListKey]healthList) healthList {
	sel := ""
	if !rs.LabelSelector.IsEmpty() {
		s, err := rs.LabelSelector.Compile()
		if err != nil {
			return healthList{err: err}
		}
		sel = s.String()
	}
	gv := schema.GroupVersion{Group: rs.Group, Version: rs.Version}
	k := healthListKey{gv: gv.String(), kind: rs.Kind, namespace: rs.Namespace, selector: sel}
	if t != nil {
		k.tenant = t.Name()
	}
	l, ok := lists[k]
	if !ok {
		l = p.facts.listBounded(ctx, gv, rs.Kind, rs.Namespace, sel, t, spec.MaxHealthCheckObjects)
		lists[k] = l
	}
	return l
}

// listBounded lists one kind with a label selector, at most limit
// objects, in the namespace asked (or, for a
// namespace-scoped cluster entry, in each of its namespaces). A tenant
// may list only what its grant lets it read.
func (f *factsClient) listBounded(ctx context.Context, gv schema.GroupVersion, kind, namespace, sel string, t *spec.Tenant, limit int) healthList {
	res, err := f.disco.ServerResourcesForGroupVersion(gv.String())
	if err != nil {
		return healthList{err: err}
	}
	for _, r := range res.APIResources {
		if r.Kind != kind || containsSlash(r.Name) {
			continue
		}
		gk := gv.WithKind(kind).GroupKind()
		nss, err := f.namespaces(gk, r.Namespaced, namespace)
		if err != nil {
			return healthList{err: err}
		}
		return f.listIn(ctx, gv.WithResource(r.Name), gk, r.Namespaced, nss, listScope{sel: sel, tenant: t, limit: limit})
	}
	return healthList{err: fmt.Errorf("the cluster serves no kind %s in %s", kind, gv)}
}

// listScope is what a health check's list may see: a label selector,
// the tenant whose grant bounds it (nil for the platform) and how many
// objects.
type listScope struct {
	sel    string
	tenant *spec.Tenant
	limit  int
}

func (f *factsClient) listIn(ctx context.Context, gvr schema.GroupVersionResource, gk schema.GroupKind, namespaced bool, nss []string, sc listScope) healthList {
	var out healthList
	for _, ns := range nss {
		if t := sc.tenant; t != nil && !t.MayRead(gk, ns, "", namespaced) {
			return healthList{err: errors.New(t.Refusal(gk, ns, "", namespaced))}
		}
		left := int64(sc.limit - len(out.objs))
		if left <= 0 {
			out.truncated = true
			break
		}
		list, err := f.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sc.sel, Limit: left})
		if err != nil {
			return healthList{err: err}
		}
		out.objs = append(out.objs, items(list.UnstructuredContent())...)
		out.truncated = out.truncated || list.GetContinue() != ""
	}
	return out
}

func selectorString(rs spec.HealthResourceSelector) string {
	gv := rs.Version
	if rs.Group != "" {
		gv = rs.Group + "/" + rs.Version
	}
	if rs.Namespace != "" {
		return fmt.Sprintf("%s %s in namespace %s", gv, rs.Kind, rs.Namespace)
	}
	return gv + " " + rs.Kind
}
