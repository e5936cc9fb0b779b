package lua

import (
	"context"
	"fmt"
	"slices"

	glua "github.com/yuin/gopher-lua"
)

// ResourceHealth is one resource a health check over many objects
// reports: which object (read from the entry's resource), its status and
// the script's message.
type ResourceHealth struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	Status     HealthCode
	Message    string
}

// checkCodes are the statuses a health check over many objects may give a
// resource, as Sveltos' HealthCheck names them.
var checkCodes = []HealthCode{Healthy, Progressing, Degraded, Suspended}

// CheckResources runs a health check over many objects, Sveltos'
// HealthCheck style: the global resources is an array of the objects, and
// the script returns (from its top level or from function evaluate()) hs
// with hs.resources, an array of entries
//
//	{resource = <one of resources>, status = "Degraded", message = "..."}
//
// status is Healthy, Progressing, Degraded or Suspended. hs.resources may
// be nil: nothing to report. An entry that is not a table, names no
// object or gives another status fails the call (ErrInvalidResult), as
// a script error does (its *ScriptError has the Lua line).
func (r *Runner) CheckResources(ctx context.Context, s Script, resources []map[string]any) ([]ResourceHealth, error) {
	if resources == nil {
		resources = []map[string]any{}
	}
	var out []ResourceHealth
	err := r.session(ctx, s, map[string]any{"resources": resources}, func(c *call, v glua.LValue) error {
		var err error
		out, err = c.resourcesHealth(v)
		return err
	})
	return out, err
}

// resourcesHealth reads hs.resources.
func (c *call) resourcesHealth(v glua.LValue) ([]ResourceHealth, error) {
	hs, err := c.table(v, "resources")
	if err != nil {
		return nil, err
	}
	var list *glua.LTable
	switch l := c.field(hs, "resources").(type) {
	case *glua.LNilType:
		return nil, nil
	case *glua.LTable:
		list = l
	default:
		return nil, c.invalid("hs.resources is a %s, want an array of {resource, status, message}", l.Type())
	}
	n := list.Len()
	out := make([]ResourceHealth, 0, n)
	for i := 1; i <= n; i++ {
		rh, err := c.resourceHealth(list.RawGetInt(i), i)
		if err != nil {
			return nil, err
		}
		out = append(out, rh)
	}
	return out, nil
}

// resourceHealth reads hs.resources[i].
func (c *call) resourceHealth(v glua.LValue, i int) (ResourceHealth, error) {
	e, ok := v.(*glua.LTable)
	if !ok {
		return ResourceHealth{}, c.invalid("hs.resources[%d] is a %s, want a table {resource, status, message}", i, v.Type())
	}
	obj, ok := c.field(e, "resource").(*glua.LTable)
	if !ok {
		return ResourceHealth{}, c.invalid("hs.resources[%d].resource is not an object: set it to the entry of resources it judges", i)
	}
	meta, _ := c.field(obj, "metadata").(*glua.LTable)
	rh := ResourceHealth{APIVersion: c.str(obj, "apiVersion"), Kind: c.str(obj, "kind")}
	if meta != nil {
		rh.Namespace, rh.Name = c.str(meta, "namespace"), c.str(meta, "name")
	}
	if rh.Name == "" {
		return ResourceHealth{}, c.invalid("hs.resources[%d].resource has no metadata.name", i)
	}
	raw := c.field(e, "status")
	st, _ := raw.(glua.LString)
	if !slices.Contains(checkCodes, HealthCode(st)) {
		return ResourceHealth{}, c.invalid("hs.resources[%d].status is %s, not one of Healthy, Progressing, Degraded, Suspended", i, describe(raw))
	}
	rh.Status = HealthCode(st)
	switch m := c.field(e, "message"); {
	case m == glua.LNil:
	case isStringy(m):
		rh.Message = glua.LVAsString(m)
	default:
		return ResourceHealth{}, c.invalid("hs.resources[%d].message is a %s, want a string", i, m.Type())
	}
	return rh, nil
}

// str reads t[key] when it is a string, else "".
func (c *call) str(t *glua.LTable, key string) string {
	if s, ok := c.field(t, key).(glua.LString); ok {
		return string(s)
	}
	return ""
}

// String names the object: "Pod default/web-1" or "Namespace web".
func (rh ResourceHealth) String() string {
	if rh.Namespace == "" {
		return fmt.Sprintf("%s %s", rh.Kind, rh.Name)
	}
	return fmt.Sprintf("%s %s/%s", rh.Kind, rh.Namespace, rh.Name)
}
