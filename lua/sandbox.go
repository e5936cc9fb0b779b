package lua

import (
	glua "github.com/yuin/gopher-lua"
)

// call is one script execution: a fresh Lua state that runs once and is
// closed, the guard it runs under, and the helpers bound to both.
type call struct {
	opts    Options
	name    string
	L       *glua.LState
	g       *guard
	arrayMT *glua.LTable
}

// newState opens the safe libraries only: base (without loaders, print and
// collectgarbage), table, string (without dump), math and an os holding time,
// date and clock. There is no io, debug, package, coroutine or channel.
func (c *call) newState() {
	c.L = glua.NewState(glua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       c.opts.CallStackSize,
		RegistrySize:        1024,
		RegistryMaxSize:     c.opts.RegistryMaxSize,
		MinimizeStackMemory: true,
	})
	for _, lib := range []struct {
		name string
		open glua.LGFunction
	}{
		{glua.BaseLibName, glua.OpenBase},
		{glua.TabLibName, glua.OpenTable},
		{glua.StringLibName, glua.OpenString},
		{glua.MathLibName, glua.OpenMath},
		{glua.OsLibName, glua.OpenOs},
	} {
		c.L.Push(c.L.NewFunction(lib.open))
		c.L.Push(glua.LString(lib.name))
		c.L.Call(1, 0)
	}
	c.arrayMT = c.L.NewTable()
	c.restrictBase()
	c.restrictOS()
	c.guardStrings()
	c.installHelpers()
}

// removedBase are the base functions that load code, reach the file system,
// stall the whole process (collectgarbage runs a full GC), or that scripts do
// not need (_printregs writes to stdout, newproxy).
var removedBase = []string{
	"dofile", "loadfile", "load", "loadstring", "require", "module",
	"collectgarbage", "_printregs", "newproxy",
}

func (c *call) restrictBase() {
	for _, name := range removedBase {
		c.L.SetGlobal(name, glua.LNil)
	}
	c.L.SetGlobal("print", c.L.NewFunction(func(*glua.LState) int { return 0 }))
}

// restrictOS replaces os (and its entry in the registry of loaded modules)
// with a table of time, date and clock.
func (c *call) restrictOS() {
	full := c.L.GetGlobal("os").(*glua.LTable)
	safe := c.L.NewTable()
	safe.RawSetString("time", full.RawGetString("time"))
	safe.RawSetString("clock", full.RawGetString("clock"))
	safe.RawSetString("date", c.wrapDate(full.RawGetString("date").(*glua.LFunction)))
	c.L.SetGlobal("os", safe)
	if loaded, ok := c.L.GetField(c.L.Get(glua.RegistryIndex), "_LOADED").(*glua.LTable); ok {
		loaded.RawSetString("os", safe)
	}
}

// guardStrings swaps the string functions that can build unbounded strings
// or run unbounded pattern matches for bounded versions (limits.go,
// strlib.go). The string table is also the strings' metatable __index, so
// s:rep(n) is covered too.
func (c *call) guardStrings() {
	str := c.L.GetGlobal("string").(*glua.LTable)
	format := str.RawGetString("format").(*glua.LFunction)
	str.RawSetString("dump", glua.LNil)
	for name, fn := range map[string]glua.LGFunction{
		"rep":    c.strRep,
		"format": c.wrapFormat(format),
		"find":   c.strFind,
		"match":  c.strMatch,
		"gmatch": c.strGmatch,
		"gfind":  c.strGmatch,
		"gsub":   c.strGsub,
	} {
		str.RawSetString(name, c.L.NewFunction(fn))
	}
	tbl := c.L.GetGlobal("table").(*glua.LTable)
	tbl.RawSetString("concat", c.L.NewFunction(c.tableConcat))
	c.L.SetGlobal(concatGlobal, c.L.NewFunction(c.concat))
}
