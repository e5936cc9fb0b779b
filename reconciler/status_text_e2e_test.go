package reconciler

import (
	"github.com/regatta-dev/regatta/internal/testenv"

	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// TestStatusTextFromLuaEscapedAndBounded: a tenant's Lua health script
// says its ConfigMap is Degraded with raw HTML and 3 MiB of text. The
// status branch's dashboards show the HTML escaped; no status file holds
// the 3 MiB (each says it was cut); the daemon's log has the full text.
func TestStatusTextFromLuaEscapedAndBounded(t *testing.T) {
	ctx := context.Background()
	files := tenantFleetFiles(t, "ts")
	files["tenants/ts-a/profiles/ts-a-app.yaml"] = profileYAML("ts-a-app", "fleet: demo", `  dependsOn: [ts-platform]
  healthTimeout: 5s
  addons:
  - name: app
    manifests: {path: tenants/ts-a/app}
  healthChecks:
  - group: ""
    kind: ConfigMap
    script: |
      return {status = "Degraded", message = "<img src=x onerror=alert(1)> " .. string.rep("x", 3 * 1024 * 1024)}
`)
	f := newFleetRepo(t)
	f.Commit("fleet", files)
	h := newHarness(t, f, nil)
	var logs testenv.LogBuffer
	h.r.log = slog.New(slog.NewTextHandler(&logs, nil))
	res, _ := h.d.RunOnce(ctx)
	p := pairs(res, "c35")["ts-a-app"]
	if p.Error == nil || !strings.Contains(p.Error.Message, "onerror") {
		t.Fatalf("ts-a-app: %s %+v", p.State, p.Error)
	}
	for _, file := range []string{status.Dashboard, status.TenantFile("ts-a"), status.ClusterFile("c35")} {
		page := f.Show("regatta/status", file)
		if len(page) > 64<<10 || !strings.Contains(page, "[truncated: ") {
			t.Errorf("%s: %d bytes, truncation marker %v", file, len(page), strings.Contains(page, "[truncated: "))
		}
		if strings.HasSuffix(file, ".md") && (strings.Contains(page, "<img") || !strings.Contains(page, "&lt;img src=x onerror=alert(1)&gt;")) {
			t.Errorf("%s: the health message's HTML is not escaped:\n%.3000s", file, page)
		}
	}
	if !strings.Contains(logs.String(), strings.Repeat("x", 3*1024*1024)) {
		t.Error("the daemon's log lacks the full health message")
	}
}
