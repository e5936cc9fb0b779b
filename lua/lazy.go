package lua

import (
	glua "github.com/yuin/gopher-lua"
)

// Libraries and helpers are built on first use: the globals table gets an
// __index metamethod that builds the missing global, stores it with rawset
// and returns it; strings get a stand-in metatable whose __index builds the
// string library (which then becomes their metatable). Most health scripts
// touch few of them, and building them all was most of the cost of a fresh
// state. Each is built at most once.

// lazyGlobals lists the globals built on demand; the index is the bit in
// call.built.
var lazyGlobals = []struct {
	name  string
	build func(*call) glua.LValue
}{
	{"string", (*call).buildString},
	{"table", (*call).buildTable},
	{"math", (*call).buildMath},
	{"os", (*call).buildOS},
	{"json", (*call).buildJSON},
	{"base64", (*call).buildBase64},
	{"strings", (*call).buildStrings},
	{"semver", (*call).buildSemver},
	{"getLabel", func(c *call) glua.LValue { return c.L.NewFunction(metadataLookup("labels")) }},
	{"getAnnotation", func(c *call) glua.LValue { return c.L.NewFunction(metadataLookup("annotations")) }},
	{"getCondition", func(c *call) glua.LValue { return c.L.NewFunction(getCondition) }},
}

func (c *call) installLazyGlobals() {
	mt := c.L.CreateTable(0, 1)
	mt.RawSetString("__index", c.L.NewFunction(c.lazyIndex))
	c.L.SetMetatable(c.L.Get(glua.GlobalsIndex), mt)
	strMT := c.L.CreateTable(0, 1)
	strMT.RawSetString("__index", c.L.NewFunction(c.stringIndex))
	c.L.SetMetatable(glua.LString(""), strMT)
}

// stringIndex is the stand-in strings' __index(s, key): it builds the
// string library, which OpenString installs as the strings' metatable.
func (c *call) stringIndex(L *glua.LState) int {
	L.Push(c.buildString().(*glua.LTable).RawGet(L.Get(2)))
	return 1
}

// lazyIndex is the globals' __index(t, key).
func (c *call) lazyIndex(L *glua.LState) int {
	key, _ := L.Get(2).(glua.LString)
	for i, g := range lazyGlobals {
		if g.name != string(key) || c.built&(1<<i) != 0 {
			continue
		}
		c.built |= 1 << i
		v := g.build(c)
		L.RawSet(L.CheckTable(1), key, v)
		L.Push(v)
		return 1
	}
	L.Push(glua.LNil)
	return 1
}

// buildTable opens table, with concat bounded and sort interruptible
// (limits.go).
func (c *call) buildTable() glua.LValue {
	t := c.open(glua.TabLibName, glua.OpenTable)
	sort := t.RawGetString("sort").(*glua.LFunction)
	c.setFuncs(t, []namedFunc{{"concat", c.tableConcat}, {"sort", c.wrapSort(sort)}})
	return t
}

func (c *call) buildMath() glua.LValue { return c.open(glua.MathLibName, glua.OpenMath) }

// buildOS returns a table of os.time, os.date (bounded) and os.clock, and
// puts it in the registry of loaded modules in place of the full os.
func (c *call) buildOS() glua.LValue {
	full := c.open(glua.OsLibName, glua.OpenOs)
	safe := c.L.CreateTable(0, 3)
	safe.RawSetString("time", full.RawGetString("time"))
	safe.RawSetString("clock", full.RawGetString("clock"))
	safe.RawSetString("date", c.wrapDate(full.RawGetString("date").(*glua.LFunction)))
	if loaded, ok := c.L.GetField(c.L.Get(glua.RegistryIndex), "_LOADED").(*glua.LTable); ok {
		loaded.RawSetString("os", safe)
	}
	return safe
}

func (c *call) module(funcs []namedFunc) glua.LValue {
	t := c.L.CreateTable(0, len(funcs))
	c.setFuncs(t, funcs)
	return t
}
