package sveltos

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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

// TestCorpusHealthCheckNotCarried: Sveltos' crashing-pod example (a Lua
// HealthCheck over Pods and a ClusterHealthCheck of it) has no regatta
// equivalent yet: both are reported and no alert is written (an alert
// without happenings would send on every one).
func TestCorpusHealthCheckNotCarried(t *testing.T) {
	out, all := importCorpus(t, "", "crashing-pod.yaml")
	wantFindings(t, all,
		"testdata/corpus/crashing-pod.yaml:2: HealthCheck crashing-pod: not carried over: regatta's alerts have no Lua health checks over any kind yet",
		"testdata/corpus/crashing-pod.yaml:51: spec.livenessChecks[0]: liveness check crashing-pod (HealthCheck crashing-pod): not carried over",
		"testdata/corpus/crashing-pod.yaml:50: spec.livenessChecks: no liveness check was carried over: alert crashing-pod not written",
	)
	if strings.Contains(all, "Secret default/slack") {
		t.Errorf("the notifications of an alert not written were reported:\n%s", all)
	}
	if _, err := os.Stat(out + "/alerts"); !os.IsNotExist(err) {
		t.Errorf("alerts/ written: %v", err)
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
