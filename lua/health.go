package lua

import (
	"context"
	"fmt"
	"slices"

	glua "github.com/yuin/gopher-lua"
)

// HealthCode is a health status as Argo CD names them.
type HealthCode string

// The health statuses a script may return.
const (
	Healthy     HealthCode = "Healthy"
	Progressing HealthCode = "Progressing"
	Degraded    HealthCode = "Degraded"
	Suspended   HealthCode = "Suspended"
	Missing     HealthCode = "Missing"
	Unknown     HealthCode = "Unknown"
)

var healthCodes = []HealthCode{Healthy, Progressing, Degraded, Suspended, Missing, Unknown}

// HealthStatus is the outcome of a health script.
type HealthStatus struct {
	Status  HealthCode
	Message string
}

// Health runs a health script with the global obj set to obj. Argo CD
// health.lua scripts work unchanged: top-level code that builds hs and ends
// with `return hs`. A script may instead define function evaluate()
// returning hs (Sveltos style).
func (r *Runner) Health(ctx context.Context, s Script, obj map[string]any) (HealthStatus, error) {
	var hs HealthStatus
	err := r.session(ctx, s, map[string]any{"obj": obj}, func(c *call, v glua.LValue) error {
		var err error
		hs, err = c.health(v)
		return err
	})
	return hs, err
}

// health reads hs.status and hs.message. As in Argo CD, a status that is
// not one of healthCodes (a misspelt one, or none: `return {}`) is not an
// error but Unknown, with a message that says why; the script's own
// message, if any, follows.
func (c *call) health(v glua.LValue) (HealthStatus, error) {
	t, err := c.table(v, "status and message")
	if err != nil {
		return HealthStatus{}, err
	}
	msg, err := c.message(t)
	if err != nil {
		return HealthStatus{}, err
	}
	raw := c.field(t, "status")
	if st, ok := raw.(glua.LString); ok && slices.Contains(healthCodes, HealthCode(st)) {
		return HealthStatus{Status: HealthCode(st), Message: msg}, nil
	}
	why := fmt.Sprintf("%s: hs.status is %s, not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown", c.name, describe(raw))
	if raw == glua.LNil {
		why = c.name + ": the script set no hs.status"
	}
	if msg != "" {
		why += " (hs.message: " + msg + ")"
	}
	return HealthStatus{Status: Unknown, Message: why}, nil
}

// describe renders a Lua value for an error message: "\"Ok\"" or "a nil value".
func describe(v glua.LValue) string {
	if s, ok := v.(glua.LString); ok {
		return `"` + string(s) + `"`
	}
	return "a " + v.Type().String() + " value"
}
