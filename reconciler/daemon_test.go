package reconciler

import (
	"context"
	"github.com/regatta-dev/regatta/internal/testenv/gitfleet"
	"os/exec"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// baseFleet is a fleet whose base profile creates namespace ns (unique per
// test: without controllers a deleted namespace stays Terminating).
func baseFleet(t *testing.T, ns string) map[string]string {
	files := map[string]string{
		"classifiers/kubernetes-v1-36.yaml": classifierYAML("36"),
		"classifiers/kubernetes-v1-37.yaml": classifierYAML("37"),
		"profiles/base.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: base}
spec:
  clusterSelector:
    matchExpressions: [{key: env, operator: Exists}]
  addons:
  - name: namespace
    manifests: {path: base}
`,
		"base/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: base, namespace: " + ns + "}\ndata: {tier: base}\n",
		"profiles/app.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: app}
spec:
  clusterSelector:
    matchExpressions: [{key: env, operator: Exists}]
  dependsOn: [base]
  addons:
  - name: settings
    template: true
    manifests: {path: app}
`,
		"app/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: " + ns + "}\ndata:\n  greeting: \"{{ .Cluster.Values.greeting }}\"\n  version: \"1\"\n",
		"compat/v1-36/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: engine-v1-36, namespace: default}\ndata: {engine: \"3.24\"}\n",
		"compat/v1-37/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: engine-v1-37, namespace: default}\ndata: {engine: \"3.25\"}\n",
	}
	for _, v := range []string{"36", "37"} {
		files["profiles/compat-v1-"+v+".yaml"] = "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: compat-v1-" + v + "}\nspec:\n  clusterSelector: {matchLabels: {kubernetes: v1-" + v + "}}\n  addons:\n  - name: engine\n    manifests: {path: compat/v1-" + v + "}\n"
	}
	for name, labels := range map[string]string{"c36": "env: staging", "c37": "env: prod"} {
		for k, v := range clusterFiles(t, name, labels) {
			files[k] = v
		}
	}
	return files
}

func classifierYAML(minor string) string {
	next := map[string]string{"36": "1.37.0", "37": "1.38.0"}[minor]
	return "apiVersion: regatta.dev/v1alpha1\nkind: Classifier\nmetadata: {name: kubernetes-v1-" + minor + "}\nspec:\n  classifierLabels: {kubernetes: v1-" + minor + "}\n  kubernetesVersionConstraints:\n  - {comparison: GreaterThanOrEqualTo, version: 1." + minor + ".0}\n  - {comparison: LessThan, version: " + next + "}\n"
}

func applies(h *harness, cluster, profile string) float64 {
	return testutil.ToFloat64(h.m.Applies.WithLabelValues(cluster, profile))
}

// TestDaemonEndToEnd drives the daemon through the life of a fleet against
// real API servers and a real Git server: rollout, a change to one
// profile, a broken commit, a fix, quiet passes, a concurrent push to the
// status branch, and an unreachable cluster.
func TestDaemonEndToEnd(t *testing.T) {
	ctx := context.Background()
	f := newFleetRepo(t)
	h := newHarness(t, f, nil)

	rev1 := f.Commit("fleet", baseFleet(t, "e2e"))
	res, err := h.d.RunOnce(ctx)
	if err != nil {
		t.Fatalf("first rollout: %v\n%+v", err, res.Snapshot)
	}
	for _, c := range []string{"c36", "c37"} {
		if got := configMap(t, c, "e2e", "app")["greeting"]; got != "hello-"+c {
			t.Errorf("%s: app greeting = %q", c, got)
		}
	}
	if configMap(t, "c36", "default", "engine-v1-36") == nil || configMap(t, "c37", "default", "engine-v1-37") == nil ||
		configMap(t, "c36", "default", "engine-v1-37") != nil {
		t.Error("classifier-selected profiles not applied per version")
	}
	st := f.Show("regatta/status", "status/clusters/c37.yaml")
	for _, want := range []string{"sourceRevision: " + rev1, "kubernetes: v1-37", "name: app\n    state: Applied"} {
		if !strings.Contains(st, want) {
			t.Errorf("status of c37 lacks %q:\n%s", want, st)
		}
	}
	if msg := gitfleet.Git(t, f.Bare, "log", "-1", "--format=%B", "regatta/status"); !strings.Contains(msg, "Regatta-Source-Revision: "+rev1) {
		t.Errorf("status commit message lacks the trailer:\n%s", msg)
	}
	token := env.Cluster("c37").RESTConfig().BearerToken
	inStatus := func(s string) bool {
		grep := exec.Command("git", "grep", "-q", "-F", "-e", s, "regatta/status")
		grep.Dir = f.Bare
		return grep.Run() == nil
	}
	if !inStatus("kind: ClusterStatus") || token == "" || inStatus(token) {
		t.Error("the kubeconfig token appears in the status files")
	}

	t.Run("only changed pairs are re-applied", func(t *testing.T) {
		baseBefore, appBefore := applies(h, "c37", "base"), applies(h, "c37", "app")
		f.Commit("app v2", map[string]string{"app/cm.yaml": strings.Replace(baseFleet(t, "e2e")["app/cm.yaml"], `version: "1"`, `version: "2"`, 1)})
		if _, err := h.d.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if got := configMap(t, "c37", "e2e", "app")["version"]; got != "2" {
			t.Errorf("app version = %q", got)
		}
		if applies(h, "c37", "base") != baseBefore || applies(h, "c37", "app") != appBefore+1 {
			t.Errorf("applies base %v->%v app %v->%v: want only app re-applied",
				baseBefore, applies(h, "c37", "base"), appBefore, applies(h, "c37", "app"))
		}
	})

	t.Run("a broken commit changes nothing and reports file and line", func(t *testing.T) {
		broken := f.Commit("broken", map[string]string{
			"profiles/app.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: app}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: settings\n    manifests: {path: missing-folder}\n",
			"base/ns.yaml":      "",
		})
		res, err := h.d.RunOnce(ctx)
		if err == nil || res.Converged {
			t.Fatalf("broken revision converged: %v", err)
		}
		if configMap(t, "c37", "e2e", "base") == nil || configMap(t, "c36", "e2e", "app") == nil {
			t.Fatal("a broken commit deleted objects")
		}
		fleet := f.Show("regatta/status", "status/fleet.yaml")
		if !strings.Contains(fleet, "sourceRevision: "+broken) || !strings.Contains(fleet, "file: profiles/app.yaml") ||
			!strings.Contains(fleet, "line: 8") || !strings.Contains(fleet, "missing-folder does not exist") {
			t.Errorf("fleet status lacks the error:\n%s", fleet)
		}
	})

	t.Run("the fix converges and quiet passes commit nothing", func(t *testing.T) {
		f.Commit("fix", baseFleet(t, "e2e"))
		if _, err := h.d.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		before := f.Commits("regatta/status")
		for i := 0; i < 3; i++ {
			if _, err := h.d.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if after := f.Commits("regatta/status"); after != before {
			t.Errorf("quiet passes made %d status commits", after-before)
		}
	})

	t.Run("a concurrent push to the status branch is kept", func(t *testing.T) {
		other := t.TempDir()
		gitfleet.Git(t, other, "clone", "-q", "-b", "regatta/status", f.Bare, ".")
		f.Write(nil)
		if err := writeFile(other, "NOTES.md", "someone else's commit\n"); err != nil {
			t.Fatal(err)
		}
		gitfleet.Git(t, other, "add", "-A")
		gitfleet.Git(t, other, "commit", "-q", "-m", "notes")
		gitfleet.Git(t, other, "push", "-q", "origin", "HEAD:regatta/status")
		theirs := gitfleet.Git(t, other, "rev-parse", "HEAD")
		f.Commit("app v3", map[string]string{"app/cm.yaml": strings.Replace(baseFleet(t, "e2e")["app/cm.yaml"], `version: "1"`, `version: "3"`, 1)})
		if _, err := h.d.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		ours := gitfleet.Git(t, f.Bare, "rev-parse", "regatta/status")
		if ours == theirs || gitfleet.Git(t, f.Bare, "merge-base", theirs, ours) != theirs {
			t.Error("the other commit is not an ancestor of the new status: history was rewritten")
		}
	})

	t.Run("an unreachable cluster does not stop the others", func(t *testing.T) {
		env.Cluster("c37").Stop()
		defer func() {
			if err := env.Cluster("c37").Start(context.Background(), "v1.37.2"); err != nil {
				t.Fatal(err)
			}
		}()
		f.Commit("app v4", map[string]string{"app/cm.yaml": strings.Replace(baseFleet(t, "e2e")["app/cm.yaml"], `version: "1"`, `version: "4"`, 1)})
		res, err := h.d.RunOnce(ctx)
		if err == nil {
			t.Fatal("converged with a stopped cluster")
		}
		if got := configMap(t, "c36", "e2e", "app")["version"]; got != "4" {
			t.Errorf("c36 app version = %q while c37 was down", got)
		}
		for _, c := range res.Snapshot.Clusters {
			if c.Cluster == "c37" && (c.Reachable || !c.ClassifierLabelsStale || c.Labels["kubernetes"] != "v1-37") {
				t.Errorf("c37 status while down: %+v", c)
			}
		}
	})
}
