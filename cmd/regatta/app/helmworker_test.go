package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets this test binary serve as regatta's chart render worker:
// commands that render charts start os.Executable() __helm-render.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == helmWorkerCommand || os.Args[1] == renderWorkerCommand) {
		os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestRenderChartTemplateBomb: a chart template whose loop count is
// computed fails `regatta render` at the deadline, naming the template
// and line, instead of hanging; without the bomb the chart renders.
func TestRenderChartTemplateBomb(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(example)); err != nil {
		t.Fatal(err)
	}
	bomb := filepath.Join(dir, "charts", "metrics-agent", "templates", "bomb.yaml")
	if err := os.WriteFile(bomb, []byte("# a bomb\n{{ range (int \"100000000000000\") }}{{ end }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, _, stderr := run(t, "render", "--cluster", "staging-1", "--profile", "monitoring", "--helm-render-timeout", "500ms", dir)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("render took %s", d)
	}
	for _, want := range []string{"charts/metrics-agent/templates/bomb.yaml:2", "template limit exceeded", "longer than 500ms"} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}
	if err := os.Remove(bomb); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "render", "--cluster", "staging-1", "--profile", "monitoring", dir); code != 0 {
		t.Errorf("without the bomb: exit %d %s", code, stderr)
	}
}

func TestHelmWorkerFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--helm-render-max-memory", "lots"},
		{"--helm-render-max-output", "-1"},
		{"--helm-render-timeout", "0s"},
		{"--helm-render-idle-timeout", "-1s"},
	} {
		all := append([]string{"render", "--cluster", "staging-1"}, args...)
		if code, _, stderr := run(t, append(all, example)...); code != ExitUsage || !strings.Contains(stderr, args[0]) {
			t.Errorf("%v: exit %d %s", args, code, stderr)
		}
	}
}

// TestPlanChartTemplateBomb: `regatta plan` fails a head commit whose
// chart loops over a count from its values, naming the template and line,
// in bounded time.
func TestPlanChartTemplateBomb(t *testing.T) {
	chart := "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: chart}\nspec:\n" +
		"  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: app\n" +
		"    helm: {path: charts/app, releaseName: app, releaseNamespace: default, values: {n: 100000000000000}}\n"
	dir, _ := planRepo(t, planScenario{name: "chart-bomb", edits: map[string]string{
		"profiles/chart.yaml":          chart,
		"charts/app/Chart.yaml":        "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		"charts/app/templates/cm.yaml": "# loops\n{{ range (int .Values.n) }}{{ end }}\n",
	}})
	start := time.Now()
	code, stdout, stderr := run(t, "plan", "--base", "HEAD~1", "--sops-age-key-file", planAgeKey, "--helm-render-timeout", "500ms", "-o", "text", dir)
	if code != 1 || !strings.Contains(stdout+stderr, "charts/app/templates/cm.yaml:2") || !strings.Contains(stdout+stderr, "template limit exceeded") {
		t.Errorf("exit %d:\n%s%s", code, stdout, stderr)
	}
	t.Logf("%s%s", stdout, stderr)
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Errorf("plan took %s", elapsed)
	}
}

// TestValidateChartTemplateBomb: `regatta validate` reports a literal
// bomb in a chart folder's template with its file and line.
func TestValidateChartTemplateBomb(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(example)); err != nil {
		t.Fatal(err)
	}
	bomb := filepath.Join(dir, "charts", "metrics-agent", "templates", "bomb.yaml")
	if err := os.WriteFile(bomb, []byte("# a bomb\n{{ range 100000000000000 }}{{ end }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "validate", dir)
	if code != 1 || !strings.Contains(stdout, "charts/metrics-agent/templates/bomb.yaml:2: helm: template limit exceeded") {
		t.Errorf("exit %d:\n%s%s", code, stdout, stderr)
	}
}
