package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const tenantsExample = "../../../examples/tenants"

// tenantFleet copies the tenants example into a temporary folder and adds
// or replaces files (a value starting with "->" makes a symlink).
func tenantFleet(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(tenantsExample)); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(body, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestValidateTenantsExample(t *testing.T) {
	code, stdout, stderr := run(t, "validate", tenantsExample)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	want := "warning: tenants/team-a/profiles/team-a-web.yaml:6: spec.clusterSelector: selects north, which tenant team-a may not reach"
	if !strings.Contains(stdout, want) {
		t.Errorf("no warning %q:\n%s", want, stdout)
	}
}

const badObjects = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: evil
rules: []
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: sys
  namespace: kube-system
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
  namespace: team-b
---
apiVersion: v1
kind: Secret
metadata:
  name: not-allowed
  namespace: team-a
`

func TestValidateRefusesTenantObjects(t *testing.T) {
	dir := tenantFleet(t, map[string]string{"tenants/team-a/apps/web/bad.yaml": badObjects})
	code, stdout, _ := run(t, "validate", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stdout)
	}
	for _, want := range []string{
		"tenants/team-a/apps/web/bad.yaml:1: ClusterRole/evil: tenant team-a may not deploy cluster-scoped kind rbac.authorization.k8s.io/ClusterRole",
		"tenants/team-a/apps/web/bad.yaml:7: ConfigMap/kube-system/sys: namespace kube-system is not one of tenant team-a's namespaces",
		"tenants/team-a/apps/web/bad.yaml:13: ConfigMap/team-b/other: namespace team-b is not one of tenant team-a's namespaces",
		"tenants/team-a/apps/web/bad.yaml:19: Secret/team-a/not-allowed: tenant team-a may not deploy kind Secret (core)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in:\n%s", want, stdout)
		}
	}
	code, _, stderr := run(t, "render", "--cluster", "east", dir)
	if code != 1 || !strings.Contains(stderr, "ClusterRole/evil") {
		t.Errorf("render: exit %d, stderr:\n%s", code, stderr)
	}
}

func TestValidateRefusesTenantEscapes(t *testing.T) {
	const kust = "tenants/team-b/api/kustomization.yaml"
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"dotdot resource", map[string]string{kust: "resources: [config.yaml, ../../../platform/namespaces.yaml]"}, "is outside tenants/team-b/"},
		{"absolute resource", map[string]string{kust: "resources: [config.yaml, /platform/namespaces.yaml]"}, "is outside tenants/team-b/"},
		{"host file", map[string]string{kust: "resources: [config.yaml, /etc/passwd]"}, "is outside tenants/team-b/"},
		{"other tenant", map[string]string{kust: "resources: [config.yaml, ../../team-a/apps/web]"}, "is outside tenants/team-b/"},
		{"component", map[string]string{kust: "components: [../../../platform]"}, "is outside tenants/team-b/"},
		{"patch file", map[string]string{kust: "resources: [config.yaml]\npatches: [{path: ../../../platform/namespaces.yaml}]"}, "is outside tenants/team-b/"},
		{"generator file", map[string]string{kust: "resources: [config.yaml]\nconfigMapGenerator: [{name: x, files: [../../../clusters/east/cluster.yaml]}]"}, "is outside tenants/team-b/"},
		{"generator env", map[string]string{kust: "resources: [config.yaml]\nsecretGenerator: [{name: x, envs: [/clusters/east/cluster.yaml]}]"}, "is outside tenants/team-b/"},
		{"remote base", map[string]string{kust: "resources: [config.yaml, https://github.com/x/y//base]"}, "remote bases and files are disabled"},
		{"symlinked folder", map[string]string{"tenants/team-b/api/link": "->../../../platform", kust: "resources: [config.yaml, link/namespaces.yaml]"}, "resolves to platform, outside tenants/team-b/"},
		{"symlinked file", map[string]string{"tenants/team-b/api/ns.yaml": "->../../../platform/namespaces.yaml", kust: "resources: [config.yaml, ns.yaml]"}, "outside tenants/team-b/"},
		{"profile path", map[string]string{"tenants/team-b/profiles/team-b-api.yaml": strings.ReplaceAll(readFile(t, tenantsExample+"/tenants/team-b/profiles/team-b-api.yaml"), "path: tenants/team-b/api", "path: tenants/team-b/../../platform")}, "resolves to platform, outside tenants/team-b/"},
		{"helm values file", map[string]string{"tenants/team-b/profiles/team-b-api.yaml": helmTenantProfile}, "helm.valuesFiles[0]: \"tenants/team-b/../../clusters/east/cluster.yaml\" resolves to clusters/east/cluster.yaml, outside tenants/team-b/"},
		{"sops without recipients", map[string]string{"tenants/team-b/api/config.yaml": sopsDoc}, "lists no key the cluster allows"},
		{"substituteFrom file", map[string]string{teamBProfile: teamBWith(t, "    postBuild:\n      substituteFrom:\n      - {kind: ConfigMap, name: vars, path: platform/namespaces.yaml}\n")}, "outside tenants/team-b/"},
		{"templated substituteFrom file", map[string]string{teamBProfile: teamBWith(t, "    postBuild:\n      substituteFrom:\n      - {kind: ConfigMap, name: vars, path: 'tenants/team-b/{{ \"../../clusters\" }}/{{ .Cluster.Name }}/cluster.yaml'}\n")},
			"spec.addons[0].postBuild.substituteFrom[0].path: \"tenants/team-b/../../clusters/north/cluster.yaml\" resolves to clusters/north/cluster.yaml, outside tenants/team-b/"},
		{"health script file", map[string]string{teamBProfile: teamBWith(t, "  healthChecks:\n  - {group: apps, kind: Deployment, scriptFile: platform/health.lua}\n"), "platform/health.lua": "hs = {status = \"Healthy\"}\nreturn hs\n"}, "outside tenants/team-b/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tenantFleet(t, tt.files)
			code, stdout, stderr := run(t, "validate", dir)
			if code != 1 || !strings.Contains(stdout, tt.want) {
				t.Errorf("exit %d, want 1 and %q in:\n%s%s", code, tt.want, stdout, stderr)
			}
		})
	}
}

const teamBProfile = "tenants/team-b/profiles/team-b-api.yaml"

// teamBWith returns team b's profile with lines added at its end (in its
// only add-on, or at spec level when they are indented so).
func teamBWith(t *testing.T, lines string) string {
	return readFile(t, tenantsExample+"/"+teamBProfile) + lines
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const helmTenantProfile = `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata:
  name: team-b-api
spec:
  clusterSelector:
    matchLabels: {team-b: "yes"}
  addons:
  - name: api
    helm:
      repositoryURL: https://charts.example.com
      chartName: api
      chartVersion: 1.0.0
      releaseNamespace: team-b
      valuesFiles: [tenants/team-b/../../clusters/east/cluster.yaml]
`

const sopsDoc = `apiVersion: v1
kind: ConfigMap
metadata:
  name: api
data:
  port: ENC[AES256_GCM,data:AAAA,iv:AAAA,tag:AAAA,type:str]
sops:
  age:
  - recipient: age1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq
    enc: x
  lastmodified: "2024-01-01T00:00:00Z"
  mac: ENC[AES256_GCM,data:AAAA,iv:AAAA,tag:AAAA,type:str]
  version: 3.9.0
`

func TestCodeowners(t *testing.T) {
	code, stdout, stderr := run(t, "codeowners", "--platform-owner", "@example/platform", tenantsExample)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `# BEGIN regatta tenants (generated by regatta codeowners; do not edit)
/tenants/team-a/ @example/team-a
/tenants/team-a/tenant.yaml @example/platform
/tenants/team-b/ @example/team-b lead@example.com
/tenants/team-b/tenant.yaml @example/platform
# END regatta tenants
`
	if stdout != want {
		t.Errorf("got:\n%s\nwant:\n%s", stdout, want)
	}
	t.Setenv("REGATTA_PLATFORM_OWNER", "@env/platform")
	if _, stdout, _ := run(t, "codeowners", tenantsExample); !strings.Contains(stdout, "tenant.yaml @env/platform") {
		t.Errorf("REGATTA_PLATFORM_OWNER not read:\n%s", stdout)
	}
}

// TestCodeownersNeedsPlatformOwner: without a platform owner, a tenant's
// folder rule would cover its tenant.yaml; nothing is printed.
func TestCodeownersNeedsPlatformOwner(t *testing.T) {
	t.Setenv("REGATTA_PLATFORM_OWNER", "")
	os.Unsetenv("REGATTA_PLATFORM_OWNER")
	code, stdout, stderr := run(t, "codeowners", tenantsExample)
	if code != 2 || stdout != "" {
		t.Fatalf("exit %d, stdout %q: want exit 2 and no section", code, stdout)
	}
	if !strings.Contains(stderr, "--platform-owner (or $REGATTA_PLATFORM_OWNER) is required") {
		t.Errorf("stderr does not say what is missing: %s", stderr)
	}
}

func TestCodeownersEnvOwner(t *testing.T) {
	t.Setenv("REGATTA_PLATFORM_OWNER", "@env/platform")
	if _, stdout, _ := run(t, "codeowners", tenantsExample); !strings.Contains(stdout, "tenant.yaml @env/platform") {
		t.Errorf("REGATTA_PLATFORM_OWNER not read:\n%s", stdout)
	}
}

// tenantPlanRepo commits the tenants example, then edits as a second commit.
func tenantPlanRepo(t *testing.T, edits map[string]string) string {
	t.Helper()
	dir := tenantFleet(t, nil)
	planGit(t, dir, "init", "-q", "-b", "main")
	planGit(t, dir, "add", "-A")
	planGit(t, dir, "commit", "-qm", "base")
	for p, content := range edits {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	planGit(t, dir, "add", "-A")
	planGit(t, dir, "commit", "-q", "--allow-empty", "-m", "head")
	return dir
}

func TestPlanGroupsByTenant(t *testing.T) {
	dir := tenantPlanRepo(t, map[string]string{
		"tenants/team-a/apps/web/web.yaml": strings.Replace(readFile(t, tenantsExample+"/tenants/team-a/apps/web/web.yaml"), "greeting: hello", "greeting: bonjour", 1),
		"tenants/team-b/api/config.yaml":   strings.Replace(readFile(t, tenantsExample+"/tenants/team-b/api/config.yaml"), "8080", "9090", 1),
	})
	code, stdout, stderr := run(t, "plan", "--base", "HEAD~1", "-o", "markdown", dir)
	if code != 2 {
		t.Fatalf("exit %d, want 2 (changes)\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"#### Changes by tenant",
		"| tenant team-a | @example/team-a | team-a-web | east, west | +0 ~2 -0 |",
		"| tenant team-b | @example/team-b lead@example.com | team-b-api | north, west | +0 ~2 -0 |",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in:\n%s", want, stdout)
		}
	}
	code, stdout, _ = run(t, "plan", "--base", "HEAD~1", dir)
	if code != 2 || !strings.Contains(stdout, "Changes by tenant:\n  tenant team-a (+0 ~2 -0)\n    approvers: @example/team-a\n    team-a-web on east, west: +0 ~2 -0\n") ||
		!strings.Contains(stdout, "  tenant team-b (+0 ~2 -0)\n    approvers: @example/team-b lead@example.com\n") {
		t.Errorf("text plan, exit %d:\n%s", code, stdout)
	}
}

func TestPlanRefusesTenantObjects(t *testing.T) {
	dir := tenantPlanRepo(t, map[string]string{"tenants/team-a/apps/web/bad.yaml": badObjects})
	code, stdout, stderr := run(t, "plan", "--base", "HEAD~1", dir)
	if code != 1 || !strings.Contains(stdout, "tenants/team-a/apps/web/bad.yaml:1: ClusterRole/evil") {
		t.Errorf("exit %d, want 1 with the refused object:\n%s%s", code, stdout, stderr)
	}
}

const secretsSource = `apiVersion: regatta.dev/v1alpha1
kind: EventSource
metadata:
  name: secrets
spec:
  resourceSelectors:
  - version: v1
    kind: Secret
`

const copyProfile = `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata:
  name: team-a-copy
spec:
  eventTrigger:
    eventSourceName: secrets
    sourceClusterSelector:
      matchLabels: {team-b: "yes"}
    destinationClusterSelector:
      matchLabels: {apps: "true"}
  addons:
  - name: copy
    template: true
    manifests: {path: tenants/team-a/copy}
`

// TestValidateRefusesUngrantedEventSources: a tenant's event profile that
// would read a cluster outside its grant is an error at the field that
// selects it; an event source of kinds the tenant may not read is a
// warning.
func TestValidateRefusesUngrantedEventSources(t *testing.T) {
	dir := tenantFleet(t, map[string]string{
		"events/secrets.yaml":                      secretsSource,
		"tenants/team-a/profiles/team-a-copy.yaml": copyProfile,
		"tenants/team-a/copy/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"copy-{{ .Event.Name }}\", namespace: team-a}\ndata: {from: \"{{ .Event.SourceCluster }}\"}\n",
	})
	code, stdout, stderr := run(t, "validate", dir)
	for _, want := range []string{
		"tenants/team-a/profiles/team-a-copy.yaml:8: spec.eventTrigger.sourceClusterSelector: selects north as event source clusters, which tenant team-a was not granted",
		"warning: tenants/team-a/profiles/team-a-copy.yaml:7: spec.eventTrigger.eventSourceName: event source secrets selects kind Secret (core) (resourceSelectors[0]), which tenant team-a may not read",
		"warning: tenants/team-a/profiles/team-a-copy.yaml:10: spec.eventTrigger.destinationClusterSelector: selects north, which tenant team-a may not reach",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in:\n%s%s", want, stdout, stderr)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	granted := strings.ReplaceAll(copyProfile, `team-b: "yes"`, `apps: "true"`)
	granted = strings.ReplaceAll(granted, "destinationClusterSelector:\n      matchLabels: {apps: \"true\"}", "destinationClusterSelector:\n      matchLabels: {team-b: \"yes\"}")
	dir = tenantFleet(t, map[string]string{
		"events/secrets.yaml":                      secretsSource,
		"tenants/team-a/profiles/team-a-copy.yaml": strings.ReplaceAll(granted, "apps: \"true\"}", "fleet: demo, team-a-src: \"yes\"}"),
		"tenants/team-a/copy/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"copy-{{ .Event.Name }}\", namespace: team-a}\n",
	})
	if code, stdout, stderr := run(t, "validate", dir); strings.Contains(stdout, "was not granted") {
		t.Errorf("exit %d: sources inside the grant refused:\n%s%s", code, stdout, stderr)
	}
}

// TestValidateRefusesTemplatedEscape: a templated add-on path that climbs
// out of the tenant's folder is refused by validate, at the profile's
// line, as the daemon refuses it.
func TestValidateRefusesTemplatedEscape(t *testing.T) {
	profile := strings.ReplaceAll(readFile(t, tenantsExample+"/tenants/team-a/profiles/team-a-web.yaml"),
		"path: tenants/team-a/apps/web", `path: tenants/team-a/x/{{ "../../../platform" }}`)
	dir := tenantFleet(t, map[string]string{"tenants/team-a/profiles/team-a-web.yaml": profile})
	code, stdout, stderr := run(t, "validate", dir)
	want := "tenants/team-a/profiles/team-a-web.yaml:12: spec.addons[0].manifests.path:"
	if code != 1 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "outside tenants/team-a/") {
		t.Errorf("exit %d, want 1 and %q ... outside tenants/team-a/ in:\n%s%s", code, want, stdout, stderr)
	}
}

// TestValidateRefusesTenantAlertDestinations: a tenant's alert toward a
// Secret its tenant.yaml does not grant, or toward Kubernetes Events, is
// an error at its file and line that refuses the tenant.
func TestValidateRefusesTenantAlertDestinations(t *testing.T) {
	dir := tenantFleet(t, map[string]string{"tenants/team-a/alerts/pager.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Alert
metadata: {name: pager}
spec:
  notifications:
  - {name: platform, type: webhook, secretRef: {name: platform-pager}}
  - {name: events, type: kubernetesEvent}
`})
	code, stdout, _ := run(t, "validate", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stdout)
	}
	for _, want := range []string{
		`tenants/team-a/alerts/pager.yaml:6: spec.notifications[0].secretRef.name: Secret "platform-pager" is not a destination tenant team-a may send to`,
		`tenants/team-a/alerts/pager.yaml:7: spec.notifications[1].type: a tenant's alert cannot record Kubernetes Events`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
}
