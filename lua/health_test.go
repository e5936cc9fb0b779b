package lua

import (
	"errors"
	"testing"
)

// argoStyle is written the way Argo CD's resource_customizations health.lua
// scripts are: a global hs, top-level code, early returns from loops.
const argoStyle = `hs = {}
if obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "Reconciliation is suspended"
  return hs
end
if obj.status ~= nil then
  if obj.status.observedGeneration ~= nil and obj.status.observedGeneration < obj.metadata.generation then
    hs.status = "Progressing"
    hs.message = "Waiting for the controller to observe generation " .. obj.metadata.generation
    return hs
  end
  if obj.status.conditions ~= nil then
    for i, condition in ipairs(obj.status.conditions) do
      if condition.type == "Ready" and condition.status == "False" then
        hs.status = "Degraded"
        hs.message = condition.message
        return hs
      end
      if condition.type == "Ready" and condition.status == "True" then
        hs.status = "Healthy"
        hs.message = condition.message
        return hs
      end
    end
  end
end
hs.status = "Progressing"
hs.message = "Waiting for the widget to become ready"
return hs
`

func widget(generation, observed int64, suspend bool, conds ...map[string]any) map[string]any {
	var list []any
	for _, c := range conds {
		list = append(list, c)
	}
	return map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "generation": generation},
		"spec":     map[string]any{"suspend": suspend},
		"status":   map[string]any{"observedGeneration": observed, "conditions": list},
	}
}

func TestArgoStyleHealthScript(t *testing.T) {
	r := NewRunner(Options{})
	s := Script{Name: "profiles/widgets.yaml spec.healthChecks[0].script", Source: argoStyle}
	ready := map[string]any{"type": "Ready", "status": "True", "message": "All good"}
	broken := map[string]any{"type": "Ready", "status": "False", "message": "Backend unreachable"}
	for name, tc := range map[string]struct {
		obj  map[string]any
		want HealthStatus
	}{
		"healthy":   {widget(2, 2, false, ready), HealthStatus{Healthy, "All good"}},
		"degraded":  {widget(2, 2, false, broken), HealthStatus{Degraded, "Backend unreachable"}},
		"stale":     {widget(3, 2, false, ready), HealthStatus{Progressing, "Waiting for the controller to observe generation 3"}},
		"suspended": {widget(1, 1, true), HealthStatus{Suspended, "Reconciliation is suspended"}},
		"no status": {map[string]any{"spec": map[string]any{}}, HealthStatus{Progressing, "Waiting for the widget to become ready"}},
	} {
		got, err := r.Health(t.Context(), s, tc.obj)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", name, got, err, tc.want)
		}
	}
}

func TestSveltosStyleHealthScript(t *testing.T) {
	s := Script{Name: "h", Source: `
function evaluate()
  local hs = {status = "Healthy"}
  if obj.status.readyReplicas ~= obj.spec.replicas then
    hs.status = "Progressing"
    hs.message = string.format("%d/%d replicas ready", obj.status.readyReplicas or 0, obj.spec.replicas)
  end
  return hs
end`}
	obj := map[string]any{"spec": map[string]any{"replicas": 3}, "status": map[string]any{"readyReplicas": 1}}
	got, err := NewRunner(Options{}).Health(t.Context(), s, obj)
	if err != nil || got != (HealthStatus{Progressing, "1/3 replicas ready"}) {
		t.Errorf("got %+v %v", got, err)
	}
}

func TestHealthAcceptsEveryArgoStatus(t *testing.T) {
	r := NewRunner(Options{})
	for _, code := range healthCodes {
		got, err := r.Health(t.Context(), Script{Name: "h", Source: `return {status = "` + string(code) + `"}`}, nil)
		if err != nil || got.Status != code {
			t.Errorf("%s: %+v %v", code, got, err)
		}
	}
}

func TestHealthInvalidResults(t *testing.T) {
	r := NewRunner(Options{})
	for src, want := range map[string]string{
		`hs = {status = "Healthy"}`:                   "h: the script returned nothing (and defines no function evaluate()); want a table with status and message",
		`return "Healthy"`:                            "h: the script returned a string, want a table with status and message",
		`return {status = "Healthy", message = true}`: "h: hs.message is a boolean, want a string",
	} {
		_, err := r.Health(t.Context(), Script{Name: "h", Source: src}, nil)
		if !errors.Is(err, ErrInvalidResult) || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", src, err, want)
		}
	}
}

// TestHealthUnknownStatus: as in Argo CD, a status outside the list, or
// none at all, is Unknown with a message, not an error.
func TestHealthUnknownStatus(t *testing.T) {
	r := NewRunner(Options{})
	for src, want := range map[string]string{
		`return {status = "Fine"}`:                      `h: hs.status is "Fine", not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown`,
		`return {status = "healthy", message = "ok"}`:   `h: hs.status is "healthy", not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown (hs.message: ok)`,
		`return {status = 3}`:                           "h: hs.status is a number value, not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown",
		`return {}`:                                     "h: the script set no hs.status",
		`hs = {} return hs`:                             "h: the script set no hs.status",
		`return {message = "waiting"}`:                  "h: the script set no hs.status (hs.message: waiting)",
		`function evaluate() return {status = "" } end`: `h: hs.status is "", not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown`,
	} {
		got, err := r.Health(t.Context(), Script{Name: "h", Source: src}, nil)
		if err != nil || got != (HealthStatus{Unknown, want}) {
			t.Errorf("%s:\n got %+v, %v\nwant Unknown %q", src, got, err, want)
		}
	}
}
