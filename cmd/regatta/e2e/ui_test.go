package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/browser"
	"github.com/regatta-dev/regatta/internal/testenv"
)

// The web UI's browser tests (issue 53, "How it is tested"): one daemon
// on real API servers serves the UI (regatta run --ui-addr), and chromium
// reads it. The subtests share the clusters, the fleet repository and the
// daemon; each brings its own profiles.

// uiWait bounds what a browser test waits for the daemon: a commit
// reconciled, a status commit, a page updated.
const uiWait = 90 * time.Second

// uiClusters are the workload clusters and their labels: c0 is the
// canary of rolling profiles, c2 the only dev cluster.
var uiClusters = map[string]string{
	"c0": "env: prod, stage: canary, fleet: ui",
	"c1": "env: prod, stage: main, fleet: ui",
	"c2": "env: dev, stage: main, fleet: ui",
}

// uiFleet is the shared fleet of the browser tests.
type uiFleet struct {
	env     *testenv.Env
	repo    repoDirs
	files   map[string]string // the fleet repository's tree, as last committed
	ui      string            // the daemon's UI, http://127.0.0.1:port
	browser *browser.Browser
}

func TestWebUI(t *testing.T) {
	f := startUIFleet(t)
	t.Run("FleetListsClusters", f.testFleetListsClusters)
	t.Run("FilterNarrows", f.testFilterNarrows)
	t.Run("FailingPairLiveAndTimeTravel", f.testFailingPairLive)
	t.Run("RolloutHalted", f.testRolloutHalted)
	t.Run("ProfileTextRunsNothing", f.testProfileTextRunsNothing)
	t.Run("TenantSeesItsOwn", f.testTenantSeesItsOwn)
}

// startUIFleet starts the management cluster and c0..c2, commits the
// clusters and starts the daemon with its UI on loopback.
func startUIFleet(t *testing.T) *uiFleet {
	names := []string{"c0", "c1", "c2"}
	opts := testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "mgmt"}}}
	for _, n := range names {
		opts.Clusters = append(opts.Clusters, testenv.ClusterOptions{Name: n})
	}
	env := testenv.StartT(t, opts)
	mgmt := clientOf(t, env.Cluster("mgmt"))
	for _, n := range names {
		kubeconfigSecret(t, mgmt, env.Cluster(n))
	}
	f := &uiFleet{env: env, repo: newRepo(t), files: map[string]string{}}
	for _, n := range names {
		f.files["clusters/"+n+"/cluster.yaml"] = clusterYAML(n, "push", uiClusters[n])
	}
	f.commit(t, "clusters", nil)
	dir := t.TempDir()
	port := freePort(t)
	f.ui = fmt.Sprintf("http://127.0.0.1:%d", port)
	startRegatta(t, "regatta-ui", logDirOr(dir), "--repo", f.repo.bare,
		"--management-kubeconfig", mgmtKubeconfig(t, dir, env.Cluster("mgmt")), "--leader-elect=false",
		"--interval", "500ms", "--status-interval", "1s", "--health-timeout", "10s",
		"--ui-addr", fmt.Sprintf("127.0.0.1:%d", port))
	testenv.WaitFor(t, uiWait, "the UI's health check", func() bool { return httpOK(f.ui + "/-/healthz") })
	f.browser = browser.Start(t)
	return f
}

// commit changes the fleet repository's tree (a nil value deletes the
// file) and pushes it; it returns the commit.
func (f *uiFleet) commit(t *testing.T, msg string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		if content == "" {
			delete(f.files, name)
			os.Remove(f.repo.work + "/" + name)
			continue
		}
		f.files[name] = content
	}
	return f.repo.commit(t, msg, maps.Clone(f.files))
}

// statusCommit waits for the status branch to hold a commit whose record
// of the cluster holds want, and returns that commit.
func (f *uiFleet) statusCommit(t *testing.T, cluster string, want ...string) string {
	t.Helper()
	var commit string
	testenv.WaitFor(t, uiWait, "a status commit of "+cluster+" with "+strings.Join(want, ", "), func() bool {
		rec, err := gitOut(f.repo.bare, "show", "regatta/status:status/clusters/"+cluster+".yaml")
		if err != nil {
			return false
		}
		for _, w := range want {
			if !strings.Contains(rec, w) {
				return false
			}
		}
		commit, err = gitOut(f.repo.bare, "rev-parse", "regatta/status")
		return err == nil
	})
	return commit
}

// page opens a tab for the test.
func (f *uiFleet) page(t *testing.T) *browser.Page { return f.browser.NewPage(t) }

// reloadUntil loads url until the JavaScript condition holds on the page
// (the daemon may not have reconciled yet), and fails naming what.
func reloadUntil(t *testing.T, p *browser.Page, url, what, cond string) {
	t.Helper()
	testenv.WaitFor(t, uiWait, what+" at "+url, func() bool {
		if p.Go(url) != http.StatusOK { // 502 before the first status
			return false
		}
		return browser.Eval[bool](p, "!!("+cond+")")
	})
	p.ClearConsole() // the errors of the loads before (502 before the first status)
}

// stateOf is the JavaScript of a matrix cell's state.
func stateOf(cluster, profile string) string {
	return fmt.Sprintf(`(document.querySelector('#matrix tr[data-cluster=%q] td[data-profile=%q]') || {}).dataset?.state`, cluster, profile)
}

// profileFiles is a profile of one ConfigMap in its own namespace, at
// version; broken puts the ConfigMap in a namespace no cluster has.
func profileFiles(name, selector, extra, version string, broken bool) map[string]string {
	ns := "ui-" + name
	cmNS := ns
	if broken {
		cmNS = "ui-missing"
	}
	return map[string]string{
		"profiles/" + name + ".yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n" +
			"  clusterSelector: {matchLabels: {" + selector + "}}\n  addons:\n  - name: cm\n    manifests: {path: apps/" + name + "}\n" + extra,
		"apps/" + name + "/objects.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: " + cmNS + "}\ndata: {version: " + version + "}\n",
	}
}

// testFleetListsClusters: the fleet page lists every cluster, with a
// meaningful title and the status commit it shows.
func (f *uiFleet) testFleetListsClusters(t *testing.T) {
	p := f.page(t)
	reloadUntil(t, p, f.ui+"/", "three clusters in the matrix", `document.querySelectorAll('#matrix tr[data-cluster]').length == 3`)
	if got := strings.Join(p.Attrs("#matrix tr[data-cluster]", "data-cluster"), ","); got != "c0,c1,c2" {
		t.Errorf("clusters %s, want c0,c1,c2", got)
	}
	if title := p.Title(); !strings.Contains(title, "regatta") {
		t.Errorf("title %q names no regatta", title)
	}
	commit, _ := p.Attr("#frame", "data-commit")
	if live, _ := p.Attr("#frame", "data-live"); commit == "" && live != "true" {
		t.Errorf("#frame names neither a status commit nor the daemon's live status")
	}
	for _, sel := range []string{"#summary", "#filters", "nav a[href]"} {
		if p.Count(sel) == 0 {
			t.Errorf("no %s on the fleet page", sel)
		}
	}
	p.Screenshot("fleet")
	p.NoErrors()
}

// testFilterNarrows: searching a cluster's name in the filter form shows
// only that cluster, and the URL can be shared.
func (f *uiFleet) testFilterNarrows(t *testing.T) {
	p := f.page(t)
	reloadUntil(t, p, f.ui+"/", "three clusters in the matrix", `document.querySelectorAll('#matrix tr[data-cluster]').length == 3`)
	p.FillAndSubmit("#filters", map[string]string{"q": "c1"})
	if got := strings.Join(p.Attrs("#matrix tr[data-cluster]", "data-cluster"), ","); got != "c1" {
		t.Errorf("after searching c1: clusters %q", got)
	}
	if u := p.URL(); !strings.Contains(u, "q=c1") {
		t.Errorf("the filter is not in the URL: %s", u)
	}
	p.Screenshot("filtered")
	p.Go(f.ui + "/?label=env%3Ddev")
	if got := strings.Join(p.Attrs("#matrix tr[data-cluster]", "data-cluster"), ","); got != "c2" {
		t.Errorf("label env=dev: clusters %q, want c2", got)
	}
	p.NoErrors()
}

// testFailingPairLive: a commit that breaks a profile shows its failing
// pairs on an open fleet page without a reload, and the fix takes them
// away; the time-travel view then shows the broken revision.
func (f *uiFleet) testFailingPairLive(t *testing.T) {
	good := f.commit(t, "live: v1", profileFiles("live", "env: prod", "", "v1", false))
	f.statusCommit(t, "c1", "sourceRevision: "+good, "name: live")
	p := f.page(t)
	reloadUntil(t, p, f.ui+"/", "live Applied on c1", stateOf("c1", "live")+` == 'Applied'`)
	browser.Eval[any](p, `window.__loaded = "kept"`)
	shown := time.Now()

	bad := f.commit(t, "live: v2 broken", profileFiles("live", "env: prod", "", "v2", true))
	took := p.Eventually(uiWait, "the failing pair on the open page", `document.querySelector('#problems li[data-cluster="c1"][data-profile="live"]')`)
	t.Logf("failing pair shown %v after the page loaded, %v after polling began", time.Since(shown).Round(time.Millisecond), took.Round(time.Millisecond))
	if browser.Eval[string](p, "window.__loaded") != "kept" {
		t.Fatal("the page reloaded: window.__loaded is gone")
	}
	if s, _ := p.Attr(`#problems li[data-cluster="c1"][data-profile="live"]`, "data-state"); s != "Failed" {
		t.Errorf("problem state %q, want Failed", s)
	}
	p.Screenshot("failing")
	brokenStatus := f.statusCommit(t, "c1", "sourceRevision: "+bad, "state: Failed")

	f.commit(t, "live: v3 fixed", profileFiles("live", "env: prod", "", "v3", false))
	p.Eventually(uiWait, "the failing pair gone after the fix", `!document.querySelector('#problems li[data-profile="live"]')`)
	if browser.Eval[string](p, "window.__loaded") != "kept" {
		t.Fatal("the page reloaded: window.__loaded is gone")
	}
	p.Eventually(uiWait, "live Applied again", stateOf("c1", "live")+` == 'Applied'`)
	p.NoErrors()

	f.timeTravel(t, p, brokenStatus, bad)
}

// timeTravel: the revisions page lists the status commit that showed the
// broken revision and links to the fleet as it was then.
func (f *uiFleet) timeTravel(t *testing.T, p *browser.Page, statusCommit, revision string) {
	t.Helper()
	p.Go(f.ui + "/revisions")
	entry := fmt.Sprintf(`#timeline li[data-commit=%q]`, statusCommit)
	if p.Count(entry) != 1 {
		t.Fatalf("the revisions page lists no %s: %v", entry, p.Attrs("#timeline li", "data-commit"))
	}
	if rev, _ := p.Attr(entry, "data-revision"); rev != revision {
		t.Errorf("status commit %s: data-revision %q, want %s", statusCommit, rev, revision)
	}
	p.Screenshot("revisions")
	p.Click(entry + ` a[href*="at="]`)
	p.Eventually(30*time.Second, "the time-travel view", `document.querySelector('#frame[data-time-travel="true"]')`)
	if c, _ := p.Attr("#frame", "data-commit"); !strings.HasPrefix(statusCommit, c) || c == "" {
		t.Errorf("the view shows status commit %q, want %s", c, statusCommit)
	}
	if s, _ := p.Attr(`#problems li[data-cluster="c1"][data-profile="live"]`, "data-state"); s != "Failed" {
		t.Errorf("at %s the failing pair is not shown (%q)", statusCommit, s)
	}
	p.Screenshot("time-travel")
	p.Go(f.ui + "/?at=" + statusCommit)
	if v := browser.Eval[string](p, stateOf("c1", "live")); v != "Failed" {
		t.Errorf("?at=%s: live on c1 is %q, want Failed", statusCommit, v)
	}
}

// testRolloutHalted: a change that fails on the canary halts the
// rollout; the profile page shows the halted stage and the commit to make.
func (f *uiFleet) testRolloutHalted(t *testing.T) {
	const rollout = "  rollout:\n    stages:\n    - name: canary\n      clusterSelector: {matchLabels: {stage: canary}}\n    - name: main\n      clusterSelector: {matchLabels: {stage: main}}\n"
	good := f.commit(t, "canary-web: v1", profileFiles("canary-web", "fleet: ui", rollout, "v1", false))
	f.statusCommit(t, "c2", "sourceRevision: "+good, "name: canary-web")
	bad := f.commit(t, "canary-web: v2 broken", profileFiles("canary-web", "fleet: ui", rollout, "v2", true))
	p := f.page(t)
	reloadUntil(t, p, f.ui+"/profiles/canary-web", "the halted canary stage", `document.querySelector('#next-step')`)
	stage := `#rollout li[data-stage="canary"]`
	if p.Count(stage) != 1 {
		t.Fatalf("no %s: stages %v", stage, p.Attrs("#rollout li", "data-stage"))
	}
	if s, _ := p.Attr(stage, "data-state"); !strings.Contains(strings.ToLower(s), "halt") && !strings.Contains(strings.ToLower(s), "fail") {
		t.Errorf("canary stage state %q, want halted or failed", s)
	}
	if next := p.Text("#next-step"); !strings.Contains(next, bad[:7]) {
		t.Errorf("#next-step %q names no %s", next, bad[:7])
	}
	if s, _ := p.Attr(`#clusters li[data-cluster="c1"]`, "data-state"); s == "Failed" {
		t.Errorf("c1, after the canary, is %s: the rollout did not halt", s)
	}
	if p.Count(`#clusters li[data-cluster]`) != 3 {
		t.Errorf("the profile's clusters: %v", p.Attrs("#clusters li", "data-cluster"))
	}
	p.Screenshot("rollout-halted")
	p.NoErrors()
	if code := p.Go(f.ui + "/clusters/c1"); code != http.StatusOK || p.Count(`#pairs tr[data-profile="canary-web"]`) != 1 {
		t.Errorf("c1's page: HTTP %d, pairs %v", code, p.Attrs("#pairs tr", "data-profile"))
	}
	p.Screenshot("cluster-c1")
}

// xssMessage is a health message of a profile holding HTML and script.
const xssMessage = `<img src=x onerror=window.__pwned=1><script>window.__pwned=2</script>`

// testProfileTextRunsNothing: a health message holding HTML and script is
// shown as text on the fleet and cluster pages and runs nothing.
func (f *uiFleet) testProfileTextRunsNothing(t *testing.T) {
	health := "  healthChecks:\n  - kind: ConfigMap\n    script: |\n      return {status = \"Degraded\", message = \"" + xssMessage + "\"}\n"
	f.commit(t, "xss", profileFiles("xss", "env: dev", health, "v1", false))
	p := f.page(t)
	reloadUntil(t, p, f.ui+"/clusters/c2", "the xss pair failing on c2", `(document.querySelector('#pairs tr[data-profile="xss"]') || {}).dataset?.state == 'Failed'`)
	if text := p.Text(`#pairs tr[data-profile="xss"]`); !strings.Contains(text, xssMessage) {
		t.Errorf("the message is not shown as text: %q", text)
	}
	if n := p.Count("#main img, #main script"); n != 0 {
		t.Errorf("%d img or script elements in #main came from a profile's text", n)
	}
	p.Injected("__pwned")
	if title := p.Title(); !strings.Contains(title, "c2") {
		t.Errorf("title %q names no c2", title)
	}
	for _, sel := range []string{"#labels", `#labels li[data-label="env"][data-source="cluster.yaml"]`} {
		if p.Count(sel) == 0 {
			t.Errorf("no %s on the cluster page", sel)
		}
	}
	p.Screenshot("cluster")
	p.Go(f.ui + "/")
	p.Eventually(10*time.Second, "the xss problem on the fleet page", `document.querySelector('#problems li[data-profile="xss"]')`)
	if text := p.Text(`#problems li[data-profile="xss"]`); !strings.Contains(text, xssMessage) {
		t.Errorf("the problem is not shown as text: %q", text)
	}
	p.Injected("__pwned")
	p.NoErrors()
}

// tenantFiles is a tenant that may reach one cluster, with a profile of
// one ConfigMap in its namespace (which the test creates on the cluster).
func tenantFiles(tenant, cluster string) map[string]string {
	dir := "tenants/" + tenant
	return map[string]string{
		dir + "/tenant.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Tenant\nmetadata: {name: " + tenant + "}\nspec:\n" +
			"  clusters: {names: [" + cluster + "]}\n  namespaces: [" + tenant + "]\n  kinds: [{kind: ConfigMap}]\n",
		dir + "/profiles/" + tenant + "-web.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + tenant + "-web}\nspec:\n" +
			"  clusterSelector: {matchLabels: {fleet: ui}}\n  addons:\n  - name: cm\n    manifests: {path: " + dir + "/web}\n",
		dir + "/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: " + tenant + "}\ndata: {owner: " + tenant + "}\n",
	}
}

// viewerToken is a token of a new ServiceAccount of the management
// cluster that RBAC lets read the tenant's part of the web UI: get on
// regatta.dev's virtual resource tenants, named after the tenant.
func viewerToken(t *testing.T, mgmt kubernetes.Interface, tenant string) string {
	t.Helper()
	ctx := context.Background()
	name := "ui-viewer-" + tenant
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"regatta.dev"}, Resources: []string{"tenants"}, ResourceNames: []string{tenant}, Verbs: []string{"get"}}}}
	if _, err := mgmt.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "regatta-system"}}
	if _, err := mgmt.CoreV1().ServiceAccounts("regatta-system").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "regatta-system"}}}
	if _, err := mgmt.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hour := int64(3600)
	tr, err := mgmt.CoreV1().ServiceAccounts("regatta-system").CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// testTenantSeesItsOwn: behind Kubernetes authentication, a tenant's
// token, posted to the login form, sees only the clusters and profiles
// of the tenant; another tenant's cluster and profile, and a cluster that
// does not exist, answer 403 with the same page; the live stream without
// a token answers 401.
func (f *uiFleet) testTenantSeesItsOwn(t *testing.T) {
	createNamespace(t, clientOf(t, f.env.Cluster("c1")), "team-a")
	createNamespace(t, clientOf(t, f.env.Cluster("c2")), "team-b")
	files := tenantFiles("team-a", "c1")
	maps.Copy(files, tenantFiles("team-b", "c2"))
	f.commit(t, "tenants team-a and team-b", files)
	f.statusCommit(t, "c1", "tenant: team-a")
	f.statusCommit(t, "c2", "tenant: team-b")
	gated := f.startGatedUI(t)

	if resp, err := http.Get(gated + "/-/stream"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the live stream without a token: %v %v, want 401", resp, err)
	} else {
		resp.Body.Close()
	}
	// A browser without a token is sent to the login form; the token it
	// posts there becomes a session cookie.
	p := f.page(t)
	p.Go(gated + "/clusters/c1")
	if u := p.URL(); !strings.Contains(u, "/-/login") {
		t.Fatalf("without a token the browser is at %s, not the login form", u)
	}
	p.Screenshot("login")
	p.Fill("#login input[name=token]", viewerToken(t, clientOf(t, f.env.Cluster("mgmt")), "team-a"))
	if code := p.Submit("#login"); code != http.StatusOK || !strings.HasSuffix(p.URL(), "/clusters/c1") {
		t.Fatalf("after the login: HTTP %d at %s, want team-a's cluster c1", code, p.URL())
	}
	if got := strings.Join(p.Attrs("#pairs tr[data-profile]", "data-profile"), ","); got != "team-a-web" {
		t.Errorf("team-a sees on c1 the pairs %q, want team-a-web", got)
	}
	p.Go(gated + "/")
	if got := strings.Join(p.Attrs("#matrix tr[data-cluster]", "data-cluster"), ","); got != "c1" {
		t.Errorf("team-a sees clusters %q, want c1", got)
	}
	if got := strings.Join(p.Attrs("#matrix td[data-profile]", "data-profile"), ","); got != "team-a-web" {
		t.Errorf("team-a sees profiles %q, want team-a-web", got)
	}
	p.Screenshot("tenant-fleet")
	var forbidden []string
	for _, name := range []string{"clusters/c2", "profiles/team-b-web", "clusters/no-such-cluster"} {
		if code := p.Go(gated + "/" + name); code != http.StatusForbidden {
			t.Errorf("team-a at /%s: HTTP %d, want 403", name, code)
		}
		// The page may name what was asked for, nothing more.
		forbidden = append(forbidden, strings.ReplaceAll(p.Text("body"), path.Base(name), "NAME"))
	}
	p.Screenshot("tenant-forbidden")
	if forbidden[0] != forbidden[2] {
		t.Errorf("another tenant's cluster and an absent one answer differently:\n%q\n%q", forbidden[0], forbidden[2])
	}
	if strings.Contains(strings.Join(forbidden, " "), "team-b") {
		t.Errorf("the 403 pages name team-b: %q", forbidden)
	}
}

// startGatedUI starts `regatta ui` over the status branch behind
// Kubernetes authentication (TokenReview and SubjectAccessReview against
// the management cluster) and returns its URL.
func (f *uiFleet) startGatedUI(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	startCommand(t, "regatta-ui-gated", logDirOr(dir), "ui", "--repo", f.repo.bare,
		"--addr", fmt.Sprintf("127.0.0.1:%d", port), "--refresh", "500ms", "--ui-auth", "kubernetes",
		"--management-kubeconfig", mgmtKubeconfig(t, dir, f.env.Cluster("mgmt")))
	testenv.WaitFor(t, uiWait, "the gated UI listening", func() bool {
		resp, err := http.Get(url + "/-/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return url
}

// startCommand starts the regatta command (its arguments after
// "regatta") as a child process, logging to logDir/id.log, stopped when
// the test ends.
func startCommand(t *testing.T, id, logDir string, args ...string) {
	t.Helper()
	log, err := os.OpenFile(filepath.Join(logDir, id+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), execAsRegatta+"=1")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{id: id, cmd: cmd, log: log, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill(syscall.SIGTERM); log.Close() })
}

// clientOf is a client of a test cluster.
func clientOf(t *testing.T, c *testenv.Cluster) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// createNamespace creates a namespace in the cluster.
func createNamespace(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	_, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// httpOK reports whether GET url answers 200.
func httpOK(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
