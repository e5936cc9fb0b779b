package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// TestAgentReadOnlyFollowCredential runs agents against a Git server that
// confines each user as a Git host does: reader may fetch only;
// agent-edge-1 may push refs/heads/regatta-status/edge-1 only, and fetch
// nothing; agent-edge-2 the same for edge-2. The agent of edge-1 follows
// the repository with reader (--git-*) and pushes its status with
// agent-edge-1 (--status-git-*): it reconciles its cluster (new in the
// repository as pulled: it claims it with no central daemon at all) and
// commits its record. The agent of edge-2, a cluster pushed before it was
// pulled, waits for the central daemon's release and writes nothing. The
// status credential cannot push the followed branch, regatta/status or
// another agent's ref, nor fetch; reader cannot push.
func TestAgentReadOnlyFollowCredential(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{AuditLog: true, Clusters: []testenv.ClusterOptions{{Name: "edge"}}})
	c := env.Cluster("edge")
	client, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	secret := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kc := secret("edge.kubeconfig", string(c.Kubeconfig()))
	users := map[string]gitUser{
		"reader":       {password: "r-pw", fetch: true},
		"agent-edge-1": {password: "a1-pw", push: []string{"refs/heads/regatta-status/edge-1"}},
		"agent-edge-2": {password: "a2-pw", push: []string{"refs/heads/regatta-status/edge-2"}},
	}
	r := newRepo(t)
	srv := newConfinedGit(t, filepath.Dir(r.bare), users)
	srv.confine(t, r.bare)
	url := "http://" + srv.addr + "/" + filepath.Base(r.bare)
	app := "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: app}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: app\n    manifests: {path: app}\n"
	r.commit(t, "edge-2 pushed", map[string]string{
		"clusters/edge-2/cluster.yaml": clusterYAML("edge-2", "push", "env: prod"),
	})
	r.commit(t, "v1", map[string]string{
		"clusters/edge-1/cluster.yaml": clusterYAML("edge-1", "pull", "env: prod"),
		"clusters/edge-2/cluster.yaml": clusterYAML("edge-2", "pull", "env: prod"),
		"profiles/app.yaml":            app,
		"app/objects.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cred-app, namespace: default}\ndata: {version: v1}\n",
	})
	agentArgs := func(cluster, user string) []string {
		return []string{"--cluster", cluster, "--kubeconfig", kc, "--repo", url, "--interval", "500ms", "--status-interval", "1s", "--leader-elect=false",
			"--git-username", "reader", "--git-password-file", secret("reader-pw", users["reader"].password),
			"--status-git-username", user, "--status-git-password-file", secret(user+"-pw", users[user].password)}
	}
	startRegatta(t, "agent-edge-1", dir, agentArgs("edge-1", "agent-edge-1")...)
	startRegatta(t, "agent-edge-2", dir, agentArgs("edge-2", "agent-edge-2")...)
	record := func(cluster string) string {
		out, _ := gitOut(r.bare, "show", "regatta-status/"+cluster+":status/clusters/"+cluster+".yaml")
		return strings.Join(strings.Fields(out), " ")
	}
	testenv.WaitFor(t, 60*time.Second, "edge-1 reconciled by its agent, its record pushed with the status credential", func() bool {
		rec := record("edge-1")
		return configMapVersion(t, client, "default", "cred-app") == "v1" && strings.Contains(rec, "state: Applied") && strings.Contains(rec, "handover: turn: 1")
	})
	testenv.WaitFor(t, 60*time.Second, "the agent of edge-2 waiting for the central daemon", func() bool {
		return strings.Contains(record("edge-2"), "waiting for the central daemon to hand over")
	})
	if n := requestsBy(t, c)["regatta/agent-edge-2"]; n > 0 {
		events, _ := testenv.ReadAuditLog(c.AuditLog())
		for _, e := range events {
			if e.UserAgent == "regatta/agent-edge-2" && isWrite(e) {
				t.Errorf("the waiting agent of edge-2 wrote: %s %s", e.Verb, e.RequestURI)
			}
		}
	}

	// What each credential cannot do, with a commit to push.
	main := git(t, r.bare, "rev-parse", "main")
	git(t, r.work, "commit", "-q", "--allow-empty", "-m", "not yours to push")
	for _, tt := range []struct{ user, ref string }{
		{"agent-edge-1", "refs/heads/main"},
		{"agent-edge-1", "refs/heads/regatta/status"},
		{"agent-edge-1", "refs/heads/regatta-status/edge-2"},
		{"agent-edge-2", "refs/heads/regatta-status/edge-1"},
		{"reader", "refs/heads/regatta-status/edge-1"},
	} {
		out, err := gitOut(r.work, "push", srv.url(tt.user, "fleet.git"), "+HEAD:"+tt.ref) // forced, as an attacker would
		if err == nil || !(strings.Contains(out, "may not push "+tt.ref) || strings.Contains(out, "may not use git-receive-pack")) {
			t.Errorf("%s pushing %s was not refused by the server's rules (%v):\n%s", tt.user, tt.ref, err, out)
		}
		t.Logf("%s pushing %s: %s", tt.user, tt.ref, strings.Join(strings.Fields(out), " "))
	}
	if out, err := gitOut(r.work, "ls-remote", srv.url("agent-edge-1", "fleet.git")); err == nil {
		t.Errorf("the status credential fetched:\n%s", out)
	}
	if now := git(t, r.bare, "rev-parse", "main"); now != main {
		t.Errorf("main moved to %s", now)
	}
	if _, err := gitOut(r.bare, "rev-parse", "--verify", "regatta/status"); err == nil {
		t.Error("regatta/status was created")
	}
}
