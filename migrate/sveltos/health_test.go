package sveltos

import (
	"context"
	"testing"

	"github.com/regatta-dev/regatta/lua"
)

// A Sveltos validateHealths script, wrapped, runs as a regatta health
// check: hs.healthy becomes Healthy, otherwise Progressing with the message.
func TestWrapHealth(t *testing.T) {
	script := `function evaluate()
  local hs = {healthy = false, message = "waiting"}
  if obj.status ~= nil and obj.status.ready then hs.healthy = true; hs.message = "" end
  return hs
end`
	r := lua.NewRunner(lua.Options{})
	s := lua.Script{Name: "wrapped", Source: wrapHealth(script)}
	for _, c := range []struct {
		obj     map[string]any
		status  lua.HealthCode
		message string
	}{
		{map[string]any{"status": map[string]any{"ready": true}}, "Healthy", ""},
		{map[string]any{"status": map[string]any{"ready": false}}, "Progressing", "waiting"},
		{map[string]any{}, "Progressing", "waiting"},
	} {
		hs, err := r.Health(context.Background(), s, c.obj)
		if err != nil {
			t.Fatal(err)
		}
		if hs.Status != c.status || hs.Message != c.message {
			t.Errorf("obj %v: got %s %q, want %s %q", c.obj, hs.Status, hs.Message, c.status, c.message)
		}
	}
}
