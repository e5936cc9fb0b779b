package lua

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	glua "github.com/yuin/gopher-lua"
)

// Run executes s with globals set (converted as described in convert.go) and
// returns what it produced, converted to Go: the value its main chunk
// returns or, when that is nil and s defines a function evaluate(), what
// evaluate() returns.
func (r *Runner) Run(ctx context.Context, s Script, globals map[string]any) (any, error) {
	var out any
	err := r.session(ctx, s, globals, func(c *call, v glua.LValue) error {
		var err error
		out, err = (&toGo{arrayMT: c.arrayMT, budget: -1}).value(v, 0)
		if err != nil {
			return c.invalid("cannot convert the result: %v", err)
		}
		return nil
	})
	return out, err
}

// session compiles s (or takes it from the cache), runs it in a fresh
// sandboxed state under the call's deadline and limits, and hands the
// script's result to use while the state is still open.
func (r *Runner) session(ctx context.Context, s Script, globals map[string]any, use func(*call, glua.LValue) error) error {
	s = s.named()
	proto, err := r.cache.get(s)
	if err != nil {
		return err
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	c := &call{opts: r.opts, name: s.Name, g: newGuard(ctx, start, r.opts)}
	c.newState()
	defer c.L.Close()
	if err := c.setGlobals(globals); err != nil {
		return err
	}
	r.watch.start(c.g)
	defer r.watch.stop(c.g)
	c.L.SetContext(c.g)
	v, err := c.invoke(c.L.NewFunctionFromProto(proto))
	if err == nil {
		v, err = c.result(v)
	}
	if err != nil {
		return err
	}
	return use(c, v)
}

// setGlobals converts and sets the caller's globals, in name order.
func (c *call) setGlobals(globals map[string]any) error {
	for _, name := range slices.Sorted(maps.Keys(globals)) {
		v, err := (&toLua{L: c.L, arrayMT: c.arrayMT, budget: -1}).value(globals[name], 0)
		if err != nil {
			return fmt.Errorf("%s: cannot pass %s to Lua: %w", c.name, name, err)
		}
		c.L.SetGlobal(name, v)
	}
	return nil
}

// invoke calls fn without arguments and returns its first result.
func (c *call) invoke(fn *glua.LFunction) (glua.LValue, error) {
	c.L.Push(fn)
	if err := c.L.PCall(0, 1, nil); err != nil {
		return nil, c.scriptError(err)
	}
	v := c.L.Get(-1)
	c.L.Pop(1)
	return v, nil
}

// result is the value the main chunk returned (Argo CD style) or, when it
// returned nothing, what the global evaluate() returns (Sveltos style).
func (c *call) result(main glua.LValue) (glua.LValue, error) {
	if main != glua.LNil {
		return main, nil
	}
	if fn, ok := c.L.GetGlobal("evaluate").(*glua.LFunction); ok {
		return c.invoke(fn)
	}
	return glua.LNil, nil
}

// table checks that the result is a table holding fields.
func (c *call) table(v glua.LValue, fields string) (*glua.LTable, error) {
	switch t := v.(type) {
	case *glua.LTable:
		return t, nil
	case *glua.LNilType:
		return nil, c.invalid("the script returned nothing (and defines no function evaluate()); want a table with %s", fields)
	default:
		return nil, c.invalid("the script returned a %s, want a table with %s", v.Type(), fields)
	}
}

// scriptError turns a gopher-lua error into a ScriptError without stack
// trace. When the guard stopped the call, its reason is the category.
func (c *call) scriptError(err error) error {
	msg := err.Error()
	var api *glua.ApiError
	if errors.As(err, &api) {
		msg = api.Object.String()
	}
	category := ErrRuntime
	if c.g.err != nil {
		category = c.g.err
	}
	return newScriptError(c.name, msg, category)
}

// invalid reports a result the caller cannot use.
func (c *call) invalid(format string, args ...any) error {
	return &ScriptError{Name: c.name, Message: fmt.Sprintf(format, args...), Err: ErrInvalidResult}
}

// field reads t[key], metamethods included.
func (c *call) field(t *glua.LTable, key string) glua.LValue {
	return c.L.GetField(t, key)
}

// message reads hs.message: a string, a number, or nothing.
func (c *call) message(hs *glua.LTable) (string, error) {
	switch v := c.field(hs, "message"); {
	case v == glua.LNil:
		return "", nil
	case isStringy(v):
		return glua.LVAsString(v), nil
	default:
		return "", c.invalid("hs.message is a %s, want a string", v.Type())
	}
}
