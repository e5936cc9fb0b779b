package flux

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// runCorpus imports a repository of testdata/corpus into a new folder,
// as `regatta import flux --offline` does (the written fleet validated),
// and returns the folder and the report's lines.
func runCorpus(t *testing.T, name string) (string, string) {
	t.Helper()
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Dir: "testdata/corpus/" + name, Out: out, Pull: Pull{Offline: true}})
	if err != nil {
		t.Fatal(err)
	}
	return out, findingsOf(res.Report)
}

// TestCorpusFluxNotificationAlerts: the Alert and Provider examples of
// Flux's notification-controller docs become alerts/ that load: the
// Slack Provider's type, channel and Secret, eventSeverity error as the
// trouble happenings, Kustomization and HelmRelease event sources as the
// profile the import made of them. The GitHub commit-status Provider and
// the event sources of other kinds are reported.
func TestCorpusFluxNotificationAlerts(t *testing.T) {
	out, all := runCorpus(t, "flux-notification-docs")
	if strings.Contains(all, "invalid here") {
		t.Fatalf("report:\n%s", all)
	}
	wantFindings(t, all,
		"clusters/production/slack-alerts.yaml:14: Alert flux-system/slack: carried over as alerts/slack-2.yaml",
		"apps/slack-alerts.yaml:14: Alert flagger-system/slack: carried over as alerts/slack.yaml",
		"clusters/production/slack-alerts.yaml:11: spec.secretRef: Secret flux-system/slack-bot-token: regatta reads it from its own namespace (--notify-namespace); the keys of a slack destination: ",
		"clusters/production/slack-alerts.yaml:22: spec.eventMetadata: not carried over",
		"clusters/production/slack-alerts.yaml:29: spec.eventSources[0]: events of GitRepository objects are not carried over",
		"apps/slack-alerts.yaml:20: spec.summary: not carried over",
		"clusters/production/github-status.yaml:7: spec.type: github sets commit statuses: regatta does that with `regatta run --commit-status-provider github`",
		"clusters/production/github-status.yaml:18: spec.providerRef: Provider github-status has no regatta destination: alert github-status not written",
	)
	if strings.Contains(all, "is left out of the add-on") {
		t.Errorf("an Alert or Provider was reported as left out:\n%s", all)
	}
	repo, diags := spec.Load(os.DirFS(out))
	if len(diags.Errors()) > 0 || len(repo.Alerts) != 2 {
		t.Fatalf("fleet: %d alerts, %v", len(repo.Alerts), diags.Errors())
	}
	want := spec.AlertSpec{
		ClusterSelector: clusterSelector([]string{"production"}),
		Profiles:        []string{"apps"},
		On:              []string{"Failed", "Conflict", "ProgressingDeadline", "RevisionRefused"},
		Notifications:   []spec.Notification{{Name: "slack-bot", Type: "slack", SecretRef: &spec.LocalSecretRef{Name: "slack-bot-token"}, Channel: "general"}},
	}
	for _, a := range repo.Alerts {
		if !reflect.DeepEqual(a.Spec, want) {
			t.Errorf("alert %s:\n got %+v\nwant %+v", a.Metadata.Name, a.Spec, want)
		}
	}
}

// Each Flux Provider type becomes regatta's destination or is reported
// with what regatta offers instead; the report names the Secret keys.
func TestProviderTypes(t *testing.T) {
	for _, c := range []struct {
		yaml, to, channel, secret string
		report                    []string
	}{
		{"{type: msteams, secretRef: {name: teams}}", "teams", "", "teams", []string{"a Teams workflow webhook"}},
		{"{type: discord, secretRef: {name: d}}", "discord", "", "d", []string{"the channel's webhook URL"}},
		{"{type: googlechat, secretRef: {name: g}}", "googlechat", "", "g", nil},
		{"{type: webex, address: https://webexapis.com/v1/messages, channel: room-1, secretRef: {name: w}}", "webex", "room-1", "w", nil},
		{"{type: telegram, channel: '@fluxcd', secretRef: {name: tg}}", "telegram", "@fluxcd", "tg", nil},
		{"{type: generic-hmac, address: https://hooks.example.com/flux, secretRef: {name: h}}", "webhook", "", "h",
			[]string{"rename token → secret", "spec.address: regatta reads a destination's address from its Secret only: put this value in Secret h as address"}},
		{"{type: generic, address: https://hooks.example.com/flux, proxy: http://proxy:3128}", "webhook", "", "p",
			[]string{"Provider p has no secretRef: the alert names Secret p", "spec.proxy: not carried over"}},
		{"{type: slack, channel: general, username: flux, secretRef: {name: s}}", "slack", "general", "s", []string{"spec.username: not carried over"}},
		{"{type: alertmanager, address: https://am/api/v2/alerts}", "", "", "", []string{"PrometheusRule"}},
		{"{type: bitbucketserver}", "", "", "", []string{"GitHub, GitLab, Gitea and Bitbucket Cloud only"}},
		{"{type: gitlab}", "", "", "", []string{"--commit-status-provider gitlab"}},
		{"{type: matrix}", "", "", "", []string{"matrix: regatta has no such destination"}},
	} {
		docs, err := migrate.ParseDocs("p.yaml", []byte("apiVersion: notification.toolkit.fluxcd.io/v1beta3\nkind: Provider\nmetadata: {name: p, namespace: ns}\nspec: "+c.yaml+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		im := &importer{report: &migrate.Report{}}
		n, _, ok := im.provider(object{obj: docs[0].Obj, doc: docs[0]})
		all := findingsOf(im.report)
		if ok != (c.to != "") || n.Type != c.to || n.Channel != c.channel || (ok && n.SecretRef.Name != c.secret) {
			t.Errorf("%s: got %v %+v\n%s", c.yaml, ok, n, all)
		}
		wantFindings(t, all, c.report...)
	}
}

// writeRepo writes files into a new folder.
func writeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := migrate.WriteFile(dir+"/"+name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const kustomizationOf = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: %s, namespace: flux-system}
spec: {path: ./%s, sourceRef: {kind: GitRepository, name: flux-system}}
`

// TestAlertOnClusters: one Flux Alert built for two clusters is one
// alert selecting both; a HelmRelease event source with matchLabels
// names the profile of the Kustomization that holds the release. An
// Alert whose Provider is missing, and one watching only Flux's own sync,
// are not written and the report says why.
func TestAlertOnClusters(t *testing.T) {
	files := map[string]string{
		"infra/releases.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: flux-system}
spec: {url: https://charts.example.com}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: flux-system, labels: {team: web}}
spec: {chart: {spec: {chart: web, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts}}}}
`,
		"apps/releases.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: db, namespace: flux-system}
spec: {chart: {spec: {chart: db, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts}}}}
`,
		"notify/alerts.yaml": `apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {name: chat, namespace: flux-system}
spec: {type: googlechat, secretRef: {name: chat-url}}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {name: web, namespace: flux-system}
spec:
  providerRef: {name: chat}
  eventSeverity: info
  eventSources:
  - {kind: HelmRelease, name: '*', matchLabels: {team: web}}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {name: orphan, namespace: flux-system}
spec:
  providerRef: {name: gone}
  eventSources: [{kind: Kustomization, name: '*'}]
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {name: sync, namespace: flux-system}
spec:
  providerRef: {name: chat}
  eventSources: [{kind: Kustomization, name: flux-system}]
`,
	}
	for _, c := range []string{"staging", "production"} {
		for _, k := range []string{"infra", "apps", "notify"} {
			files["clusters/"+c+"/"+k+".yaml"] = fmt.Sprintf(kustomizationOf, k, k)
		}
	}
	out := t.TempDir()
	res, err := Run(context.Background(), Options{Dir: writeRepo(t, files), Out: out, Pull: Pull{Offline: true}})
	if err != nil {
		t.Fatal(err)
	}
	all := findingsOf(res.Report)
	wantFindings(t, all,
		"notify/alerts.yaml:6: Alert flux-system/web: carried over as alerts/web.yaml",
		"notify/alerts.yaml:11: spec.eventSeverity: info (Flux's default) sends every event",
		"notify/alerts.yaml:19: spec.providerRef: Provider flux-system/gone is not in this repository: alert not written",
		"notify/alerts.yaml:27: spec.eventSources[0]: Kustomization flux-system is Flux's own sync, which regatta replaces: not watched",
		"notify/alerts.yaml:27: spec.eventSources: none of its event sources became a profile: alert sync not written",
	)
	repo, diags := spec.Load(os.DirFS(out))
	if len(diags.Errors()) > 0 || len(repo.Alerts) != 1 {
		t.Fatalf("fleet: %d alerts, %v\n%s", len(repo.Alerts), diags.Errors(), all)
	}
	a := repo.Alerts[0].Spec
	if !reflect.DeepEqual(a.ClusterSelector, clusterSelector([]string{"production", "staging"})) || !reflect.DeepEqual(a.Profiles, []string{"infra"}) ||
		!reflect.DeepEqual(a.On, spec.AlertHappenings) || a.Notifications[0].Type != spec.NotifyGoogleChat {
		t.Errorf("alert web: %+v", a)
	}
}
