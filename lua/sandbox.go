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
	arrayMT *glua.LTable // marks tables that came from arrays (convert.go)
	built   uint32       // lazy globals already built, by index in lazyGlobals
	strlib  *glua.LTable // the string library, once built
}

// newState opens the safe libraries only: base (without loaders, print and
// collectgarbage) and, built on first use (lazy.go), string (without dump),
// table, math, an os holding time, date and clock, and the helpers. There is
// no io, debug, package, coroutine or channel.
func (c *call) newState() {
	c.L = glua.NewState(glua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       c.opts.CallStackSize,
		RegistrySize:        registryStart,
		RegistryMaxSize:     max(c.opts.RegistryMaxSize, registryStart),
		RegistryGrowStep:    max(c.opts.RegistryMaxSize/8, registryStart),
		MinimizeStackMemory: true,
	})
	c.open(glua.BaseLibName, glua.OpenBase)
	c.arrayMT = c.L.NewTable()
	c.restrictBase()
	c.L.SetGlobal(concatGlobal, c.L.NewFunction(c.concat))
	c.installLazyGlobals()
}

// registryStart is the data stack a state starts with. It grows in eighths
// of RegistryMaxSize: gopher-lua grows it by a fixed step and copies it each
// time, so its default step (32) makes `s:byte(1, -1)` on a long string
// quadratic — half a minute in one uninterruptible call.
const registryStart = 256

// open runs a gopher-lua library opener and returns the library's table.
func (c *call) open(name string, opener glua.LGFunction) *glua.LTable {
	c.L.Push(c.L.NewFunction(opener))
	c.L.Push(glua.LString(name))
	c.L.Call(1, 1)
	lib := c.L.Get(-1).(*glua.LTable)
	c.L.Pop(1)
	return lib
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

// buildString opens string with the functions that can build unbounded
// strings or run unbounded pattern matches swapped for bounded versions
// (limits.go, strlib.go). The library is also the strings' metatable
// __index, so s:rep(n) is covered too.
func (c *call) buildString() glua.LValue {
	if c.strlib != nil {
		return c.strlib
	}
	str := c.open(glua.StringLibName, glua.OpenString)
	format := str.RawGetString("format").(*glua.LFunction)
	str.RawSetString("dump", glua.LNil)
	c.setFuncs(str, []namedFunc{
		{"rep", c.strRep}, {"format", c.wrapFormat(format)},
		{"find", c.strFind}, {"match", c.strMatch}, {"gsub", c.strGsub},
		{"gmatch", c.strGmatch}, {"gfind", c.strGmatch},
	})
	c.strlib = str
	return str
}

type namedFunc struct {
	name string
	fn   glua.LGFunction
}

func (c *call) setFuncs(t *glua.LTable, funcs []namedFunc) {
	for _, f := range funcs {
		t.RawSetString(f.name, c.L.NewFunction(f.fn))
	}
}
