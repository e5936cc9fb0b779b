package sveltos

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/lua"
	"github.com/regatta-dev/regatta/spec"
)

// TestCorpusClusterHealthCheckAlerts: Sveltos' add-on notification
// examples (Slack, SMTP, Kubernetes events) become alerts/ that load;
// the Addons liveness check is the add-ons' happenings, the clusters are
// Sveltos' selector, and the report names the Secret keys to rename.
func TestCorpusClusterHealthCheckAlerts(t *testing.T) {
	out, all := importCorpus(t, "", "healthcheck-slack.yaml", "healthcheck-smtp.yaml", "healthcheck-kubernetes-event.yaml")
	if strings.Contains(all, "not a kind the Sveltos import reads") || strings.Contains(all, "invalid here") {
		t.Fatalf("report:\n%s", all)
	}
	wantFindings(t, all,
		"testdata/corpus/healthcheck-slack.yaml:16: spec.notifications[0].notificationRef: Secret default/slack: regatta reads it from its own namespace (--notify-namespace), with other keys than Sveltos': SLACK_TOKEN → token, SLACK_CHANNEL_ID → channel",
		"testdata/corpus/healthcheck-smtp.yaml:16: spec.notifications[0].notificationRef: Secret default/smtp: regatta reads it from its own namespace (--notify-namespace), with other keys than Sveltos': SMTP_HOST → host",
		"testdata/corpus/healthcheck-slack.yaml:2: ClusterHealthCheck production: carried over as alerts/production-2.yaml",
		"testdata/corpus/healthcheck-kubernetes-event.yaml:14: spec.notifications[0]: Kubernetes Events are recorded in regatta's --notify-namespace",
	)
	repo, diags := spec.Load(os.DirFS(out))
	if len(diags.Errors()) > 0 || len(repo.Alerts) != 3 {
		t.Fatalf("fleet: %d alerts, %v", len(repo.Alerts), diags.Errors())
	}
	byType := map[string]*spec.Alert{}
	for _, a := range repo.Alerts {
		if len(a.Spec.Notifications) != 1 {
			t.Fatalf("alert %s: %+v", a.Metadata.Name, a.Spec.Notifications)
		}
		byType[a.Spec.Notifications[0].Type] = a
		if a.Spec.ClusterSelector.MatchLabels["env"] != "fv" || !reflect.DeepEqual(a.Spec.On, []string{"Failed", "Conflict", "ProgressingDeadline"}) || len(a.Spec.Profiles) != 0 {
			t.Errorf("alert %s: %+v", a.Metadata.Name, a.Spec)
		}
	}
	if n := byType[spec.NotifySlack]; n == nil || n.Spec.Notifications[0].SecretRef.Name != "slack" {
		t.Errorf("slack alert %+v", n)
	}
	if n := byType[spec.NotifySMTP]; n == nil || n.Spec.Notifications[0].SecretRef.Name != "smtp" {
		t.Errorf("smtp alert %+v", n)
	}
	if n := byType[spec.NotifyEvent]; n == nil || n.Spec.Notifications[0].SecretRef != nil {
		t.Errorf("kubernetesEvent alert %+v", n)
	}
}

// TestCorpusHealthCheckCarried: Sveltos' crashing-pod example (a Lua
// HealthCheck over Pods and a ClusterHealthCheck of it) becomes an alert
// with that health check, which loads and validates, and whose script
// finds a Pod in CrashLoopBackOff Degraded as Sveltos' would.
func TestCorpusHealthCheckCarried(t *testing.T) {
	out, all := importCorpus(t, "", "crashing-pod.yaml")
	wantFindings(t, all,
		"testdata/corpus/crashing-pod.yaml:2: HealthCheck crashing-pod: carried over into the spec.healthChecks of the alert of each ClusterHealthCheck that references it",
		"testdata/corpus/crashing-pod.yaml:51: spec.livenessChecks[0]: liveness check crashing-pod: carried over as the alert's health check crashing-pod (HealthCheck crashing-pod)",
		"testdata/corpus/crashing-pod.yaml:42: ClusterHealthCheck crashing-pod: carried over as alerts/crashing-pod.yaml",
	)
	if strings.Contains(all, "not carried over") || strings.Contains(all, "invalid here") {
		t.Errorf("report:\n%s", all)
	}
	repo, diags := spec.Load(os.DirFS(out))
	if len(diags) > 0 || len(repo.Alerts) != 1 {
		t.Fatalf("fleet: %d alerts, %v", len(repo.Alerts), diags)
	}
	a := repo.Alerts[0]
	if !reflect.DeepEqual(a.Spec.On, []string{spec.AlertOnHealthCheckDegraded}) || a.Spec.ClusterSelector.MatchLabels["env"] != "fv" || len(a.Spec.HealthChecks) != 1 {
		t.Fatalf("alert %+v", a.Spec)
	}
	hc := a.Spec.HealthChecks[0]
	if hc.Name != "crashing-pod" || !reflect.DeepEqual(hc.ResourceSelectors, []spec.HealthResourceSelector{{Version: "v1", Kind: "Pod"}}) {
		t.Fatalf("health check %+v", hc)
	}
	name, src, err := a.HealthCheckScript(repo.FS, 0)
	if err != nil {
		t.Fatal(err)
	}
	crashing := map[string]any{"kind": "Pod", "metadata": map[string]any{"namespace": "web", "name": "crash"},
		"status": map[string]any{"containerStatuses": []any{map[string]any{
			"state":     map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}},
			"lastState": map[string]any{"terminated": map[string]any{"reason": "Error"}}}}}}
	running := map[string]any{"kind": "Pod", "metadata": map[string]any{"namespace": "web", "name": "ok"},
		"status": map[string]any{"containerStatuses": []any{map[string]any{"state": map[string]any{"running": map[string]any{}}, "lastState": map[string]any{}}}}}
	got, err := lua.NewRunner(lua.Options{}).CheckResources(context.Background(), lua.Script{Name: name, Source: src}, []map[string]any{running, crashing})
	if err != nil || len(got) != 1 || got[0].String() != "Pod web/crash" || got[0].Status != lua.Degraded || got[0].Message != "web/crash:back-off 5m0s\nreason:Error" {
		t.Fatalf("the imported script: %+v, %v", got, err)
	}
}

// A HealthCheck's label filters become a label selector (Different as
// NotIn); what regatta has no place for is reported; a liveness check
// naming a HealthCheck not imported is reported and dropped.
func TestHealthCheckSelectors(t *testing.T) {
	dir := t.TempDir()
	docs := `apiVersion: lib.projectsveltos.io/v1beta1
kind: HealthCheck
metadata: {name: deployments}
spec:
  collectResources: true
  resourceSelectors:
  - group: apps
    version: v1
    kind: Deployment
    namespace: web
    labelFilters:
    - {key: app, operation: Equal, value: web}
    - {key: tier, operation: Different, value: canary}
    evaluate: "function evaluate() return {matching = true} end"
  evaluateHealth: "function evaluate() return {} end"
---
apiVersion: lib.projectsveltos.io/v1beta1
kind: ClusterHealthCheck
metadata: {name: web}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  livenessChecks:
  - {name: addons, type: Addons}
  - {name: deployments, type: HealthCheck, livenessSourceRef: {kind: HealthCheck, apiVersion: lib.projectsveltos.io/v1beta1, name: deployments}}
  - {name: gone, type: HealthCheck, livenessSourceRef: {kind: HealthCheck, apiVersion: lib.projectsveltos.io/v1beta1, name: gone}}
  notifications: [{name: events, type: KubernetesEvent}]
`
	if err := os.WriteFile(filepath.Join(dir, "hc.yaml"), []byte(docs), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Files: []string{filepath.Join(dir, "hc.yaml")}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range res.Report.Findings() {
		lines = append(lines, f.String())
	}
	all := strings.Join(lines, "\n")
	wantFindings(t, all,
		"hc.yaml:5: spec.collectResources: not carried over",
		"hc.yaml:14: spec.resourceSelectors[0].evaluate: not carried over: the check's script sees every object the selector lists",
		"hc.yaml:25: spec.livenessChecks[2].livenessSourceRef: HealthCheck gone is not among the imported files: liveness check gone not carried over",
	)
	repo, diags := spec.Load(os.DirFS(out))
	if len(diags.Errors()) > 0 || len(repo.Alerts) != 1 {
		t.Fatalf("fleet: %+v %v", repo.Alerts, diags.Errors())
	}
	a := repo.Alerts[0].Spec
	want := spec.HealthResourceSelector{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "web", LabelSelector: spec.LabelSelector{
		MatchLabels:      map[string]string{"app": "web"},
		MatchExpressions: []spec.LabelSelectorRequirement{{Key: "tier", Operator: "NotIn", Values: []string{"canary"}}}}}
	if len(a.HealthChecks) != 1 || !reflect.DeepEqual(a.HealthChecks[0].ResourceSelectors, []spec.HealthResourceSelector{want}) ||
		!reflect.DeepEqual(a.On, []string{"Failed", "Conflict", "ProgressingDeadline", "HealthCheckDegraded"}) {
		t.Fatalf("alert %+v", a)
	}
}

// A ClusterHealthCheck without clusterSelector watches every cluster
// (said in the report); a notification without its Secret is dropped,
// and with no notification left the alert is not written.
func TestClusterHealthCheckEdges(t *testing.T) {
	dir := t.TempDir()
	chc := `apiVersion: lib.projectsveltos.io/v1beta1
kind: ClusterHealthCheck
metadata: {name: all}
spec:
  livenessChecks: [{name: addons, type: Addons}]
  notifications: [{name: events, type: KubernetesEvent}]
---
apiVersion: lib.projectsveltos.io/v1beta1
kind: ClusterHealthCheck
metadata: {name: lost}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  livenessChecks: [{name: addons, type: Addons}]
  notifications: [{name: discord, type: Discord}]
`
	if err := os.WriteFile(filepath.Join(dir, "chc.yaml"), []byte(chc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Files: []string{filepath.Join(dir, "chc.yaml")}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range res.Report.Findings() {
		lines = append(lines, f.String())
	}
	all := strings.Join(lines, "\n")
	wantFindings(t, all,
		"chc.yaml:4: spec.clusterSelector: empty: the alert watches every cluster",
		"chc.yaml:14: spec.notifications[0].notificationRef: a Discord notification needs a Secret: not carried over",
		"chc.yaml:14: spec.notifications: no notification was carried over: alert lost not written",
	)
	repo, diags := spec.Load(os.DirFS(out))
	if len(diags.Errors()) > 0 || len(repo.Alerts) != 1 || repo.Alerts[0].Metadata.Name != "all" {
		t.Fatalf("fleet: %+v %v", repo.Alerts, diags.Errors())
	}
}
