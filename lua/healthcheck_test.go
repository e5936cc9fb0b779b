package lua

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// crashingPods is written the way Sveltos' HealthCheck examples are: a
// global evaluate() over resources, entries keeping the object itself.
const crashingPods = `function evaluate()
  local hs = {resources = {}}
  for _, pod in ipairs(resources) do
    for _, cs in ipairs(pod.status.containerStatuses or {}) do
      local waiting = cs.state and cs.state.waiting
      if waiting and waiting.reason == "CrashLoopBackOff" then
        table.insert(hs.resources, {resource = pod, status = "Degraded",
          message = cs.name .. ": " .. (waiting.message or waiting.reason)})
      end
    end
  end
  return hs
end
`

func pod(ns, name, waitingReason string) map[string]any {
	state := map[string]any{"running": map[string]any{}}
	if waitingReason != "" {
		state = map[string]any{"waiting": map[string]any{"reason": waitingReason, "message": "back-off 5m0s"}}
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"status": map[string]any{"containerStatuses": []any{
			map[string]any{"name": "app", "state": state},
		}},
	}
}

func TestCheckResources(t *testing.T) {
	r := NewRunner(Options{})
	pods := []map[string]any{pod("web", "ok", ""), pod("web", "crash", "CrashLoopBackOff"), pod("db", "pull", "ImagePullBackOff")}
	for name, tc := range map[string]struct {
		source    string
		resources []map[string]any
		want      string // the results, "Kind ns/name=Status:message;..."
		wantErr   string
		category  error
	}{
		"sveltos style, one crashing": {source: crashingPods, resources: pods, want: "Pod web/crash=Degraded:app: back-off 5m0s"},
		"none selected":               {source: crashingPods, resources: nil, want: ""},
		"top-level return, every status": {source: `local hs = {resources = {}}
for i, o in ipairs(resources) do
  local st = ({"Healthy", "Progressing", "Suspended"})[i]
  table.insert(hs.resources, {resource = o, status = st})
end
return hs`, resources: pods, want: "Pod web/ok=Healthy:;Pod web/crash=Progressing:;Pod db/pull=Suspended:"},
		"no resources field": {source: `return {}`, resources: pods, want: ""},
		"script error with line": {source: "local hs = {}\nlocal x = resources[1].status.nope.deeper\nreturn hs",
			resources: pods, wantErr: "alerts/a.yaml spec.healthChecks[0].script:2: attempt to index a nil value", category: ErrRuntime},
		"unknown status": {source: `return {resources = {{resource = resources[1], status = "Broken"}}}`,
			resources: pods, wantErr: `hs.resources[1].status is "Broken", not one of Healthy, Progressing, Degraded, Suspended`, category: ErrInvalidResult},
		"entry without object": {source: `return {resources = {{status = "Degraded"}}}`,
			resources: pods, wantErr: "hs.resources[1].resource is not an object", category: ErrInvalidResult},
		"resources not a table": {source: `return {resources = 3}`,
			resources: pods, wantErr: "hs.resources is a number", category: ErrInvalidResult},
		"nothing returned": {source: `local x = 1`, resources: pods, wantErr: "the script returned nothing", category: ErrInvalidResult},
	} {
		t.Run(name, func(t *testing.T) {
			s := Script{Name: "alerts/a.yaml spec.healthChecks[0].script", Source: tc.source}
			got, err := r.CheckResources(context.Background(), s, tc.resources)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, tc.category) {
					t.Fatalf("error %v, want %q (%v)", err, tc.wantErr, tc.category)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, rh := range got {
				parts = append(parts, fmt.Sprintf("%s=%s:%s", rh, rh.Status, rh.Message))
			}
			if s := strings.Join(parts, ";"); s != tc.want {
				t.Errorf("got %q, want %q", s, tc.want)
			}
		})
	}
}

// TestCheckResourcesLimits: a check runs under the sandbox's deadline and
// instruction limit like every script, with no escape to the host.
func TestCheckResourcesLimits(t *testing.T) {
	pods := []map[string]any{pod("web", "a", "")}
	r := NewRunner(Options{Timeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := r.CheckResources(context.Background(), Script{Name: "loop", Source: "while true do end"}, pods)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("endless loop: %v after %v", err, time.Since(start))
	}
	_, err = NewRunner(Options{MaxInstructions: 10000}).CheckResources(context.Background(),
		Script{Name: "busy", Source: "local n = 0\nfor i = 1, 1e9 do n = n + i end\nreturn {}"}, pods)
	if !errors.Is(err, ErrInstructionLimit) {
		t.Fatalf("busy loop: %v", err)
	}
	_, err = r.CheckResources(context.Background(), Script{Name: "escape", Source: `io.open("/etc/passwd")`}, pods)
	if !errors.Is(err, ErrRuntime) || !strings.Contains(err.Error(), "escape:1:") {
		t.Fatalf("io: %v", err)
	}
	_, err = r.CheckResources(context.Background(), Script{Name: "big", Source: `local s = string.rep("x", 1e9) return {}`}, pods)
	if !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("string.rep: %v", err)
	}
}

// BenchmarkCheckResources200 is one check's cost per cluster and pass at
// 200 selected Pods, one of ten crashing.
func BenchmarkCheckResources200(b *testing.B) {
	r := NewRunner(Options{})
	pods := make([]map[string]any, 200)
	for i := range pods {
		reason := ""
		if i%10 == 0 {
			reason = "CrashLoopBackOff"
		}
		pods[i] = pod("web", fmt.Sprintf("p-%d", i), reason)
	}
	s := Script{Name: "crashing-pods", Source: crashingPods}
	b.ReportAllocs()
	for b.Loop() {
		got, err := r.CheckResources(context.Background(), s, pods)
		if err != nil || len(got) != 20 {
			b.Fatalf("%d, %v", len(got), err)
		}
	}
}
