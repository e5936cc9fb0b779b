package lua

import (
	"fmt"
	"strings"

	glua "github.com/yuin/gopher-lua"
)

// Bounded versions of everything that can build a long string in one step:
// the ".." operator (rewritten into c.concat by rewrite.go), string.rep,
// string.format, table.concat and os.date. Each checks the size before it
// allocates, so no single instruction can allocate more than
// Options.MaxStringLen (times a small factor); the watchdog bounds the sum.

// checkLen ends the call when a string of n bytes would pass MaxStringLen.
func (c *call) checkLen(what string, n int) {
	if n >= 0 && n <= c.opts.MaxStringLen {
		return
	}
	c.abortSize(what, float64(n))
}

func (c *call) abortSize(what string, n float64) {
	size := "more than 8 EiB"
	if n < 1<<62 {
		size = formatBytes(int64(n))
	}
	c.abort(fmt.Errorf("%w: %s would build a string of %s; the limit is %s",
		ErrMemoryLimit, what, size, formatBytes(int64(c.opts.MaxStringLen))))
}

// abort ends the call with err: it is recorded in the guard, so it cannot be
// caught by pcall for longer than one instruction, and raised in Lua.
func (c *call) abort(err error) {
	c.g.fail(err)
	c.L.RaiseError("%s", err.Error())
}

func isStringy(v glua.LValue) bool {
	t := v.Type()
	return t == glua.LTString || t == glua.LTNumber
}

// concat implements the chain `a .. b .. c`: when every operand is a
// string or number, they are joined at once after a size check; otherwise
// the chain folds from the right, pairs without a string or number going to
// a __concat metamethod, as in the VM.
func (c *call) concat(L *glua.LState) int {
	n, size := L.GetTop(), 0
	for i := 1; i <= n && size >= 0; i++ {
		if v := L.Get(i); isStringy(v) {
			size += len(glua.LVAsString(v))
		} else {
			size = -1
		}
	}
	if size < 0 {
		acc := L.Get(n)
		for i := n - 1; i >= 1; i-- {
			acc = c.concatPair(L, L.Get(i), acc)
		}
		L.Push(acc)
		return 1
	}
	c.checkLen("..", size)
	var b strings.Builder
	b.Grow(size)
	for i := 1; i <= n; i++ {
		b.WriteString(glua.LVAsString(L.Get(i)))
	}
	L.Push(glua.LString(b.String()))
	return 1
}

// concatPair is a .. b for one pair.
func (c *call) concatPair(L *glua.LState, a, b glua.LValue) glua.LValue {
	if isStringy(a) && isStringy(b) {
		sa, sb := glua.LVAsString(a), glua.LVAsString(b)
		c.checkLen("..", len(sa)+len(sb))
		return glua.LString(sa + sb)
	}
	mm := L.GetMetaField(a, "__concat")
	if mm == glua.LNil {
		mm = L.GetMetaField(b, "__concat")
	}
	if mm == glua.LNil {
		L.RaiseError("attempt to concatenate a %s value", concatCulprit(a, b).Type())
	}
	L.Push(mm)
	L.Push(a)
	L.Push(b)
	L.Call(2, 1)
	v := L.Get(-1)
	L.Pop(1)
	return v
}

// concatCulprit is the operand Lua 5.1 names when a .. b fails: a, unless
// a is a string or number.
func concatCulprit(a, b glua.LValue) glua.LValue {
	if isStringy(a) {
		return b
	}
	return a
}

func (c *call) strRep(L *glua.LState) int {
	s, n := L.CheckString(1), float64(L.CheckNumber(2))
	if n < 1 || s == "" {
		L.Push(glua.LString(""))
		return 1
	}
	if size := n * float64(len(s)); size > float64(c.opts.MaxStringLen) {
		c.abortSize("string.rep", size)
	}
	L.Push(glua.LString(strings.Repeat(s, int(n))))
	return 1
}

// wrapFormat bounds string.format: widths and precisions above 99 are
// refused (as in Lua; Go's fmt would pad to a million), and the result's
// size is estimated from the arguments before formatting.
func (c *call) wrapFormat(orig *glua.LFunction) glua.LGFunction {
	return func(L *glua.LState) int {
		f := L.CheckString(1)
		size, quoted, err := formatSize(f)
		if err != nil {
			L.RaiseError("%s", err.Error())
		}
		for i := 2; i <= L.GetTop(); i++ {
			if s, ok := L.Get(i).(glua.LString); ok {
				size += len(s) * (1 + 5*boolInt(quoted))
			}
		}
		c.checkLen("string.format", size)
		return orig.GFunction(L)
	}
}

// formatSize returns a bound on what the directives of f produce besides
// their string arguments, and whether any directive is %q.
func formatSize(f string) (size int, quoted bool, err error) {
	size = len(f)
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		digits := 0
		for i++; i < len(f) && !isLetter(f[i]) && f[i] != '%'; i++ {
			digits = (digits + 1) * boolInt(isDigit(f[i]))
			if digits > 2 {
				return 0, false, fmt.Errorf("invalid format (width or precision too long)")
			}
		}
		quoted = quoted || (i < len(f) && f[i] == 'q')
		size += 512 // 99 of width, 99 of precision, 310 digits of a float
	}
	return size, quoted, nil
}

func isLetter(b byte) bool { return (b|0x20) >= 'a' && (b|0x20) <= 'z' }
func isDigit(b byte) bool  { return b >= '0' && b <= '9' }

// tableConcat is table.concat with Lua 5.1 semantics (nil within the range
// is an error) and the size checked before the string is built.
func (c *call) tableConcat(L *glua.LState) int {
	t := L.CheckTable(1)
	sep := L.OptString(2, "")
	i, j := L.OptInt(3, 1), L.OptInt(4, t.Len())
	size := 0
	for k := i; k <= j; k++ {
		v := t.RawGetInt(k)
		if !isStringy(v) {
			L.RaiseError("invalid value (at index %d) in table for 'concat'", k)
		}
		size += len(glua.LVAsString(v)) + len(sep)*boolInt(k < j)
		c.checkLen("table.concat", size)
	}
	var b strings.Builder
	b.Grow(size)
	for k := i; k <= j; k++ {
		b.WriteString(glua.LVAsString(t.RawGetInt(k)))
		if k < j {
			b.WriteString(sep)
		}
	}
	L.Push(glua.LString(b.String()))
	return 1
}

// wrapSort makes table.sort interruptible. With a comparator every
// comparison is a Lua call, which the guard sees; without one gopher-lua
// sorts in Go, and a million strings take a second past any deadline. So a
// long array without a comparator is sorted with a Go comparator that
// charges the guard.
func (c *call) wrapSort(orig *glua.LFunction) glua.LGFunction {
	return func(L *glua.LState) int {
		if t := L.CheckTable(1); L.GetTop() == 1 && t.Len() > 4096 {
			L.Push(L.NewFunction(c.guardedLess))
		}
		return orig.GFunction(L)
	}
}

func (c *call) guardedLess(L *glua.LState) int {
	if err := c.g.tick(1); err != nil {
		L.RaiseError("%s", err.Error())
	}
	L.Push(glua.LBool(L.LessThan(L.Get(1), L.Get(2))))
	return 1
}

// wrapDate bounds os.date's format, whose directives expand up to ~32 bytes.
func (c *call) wrapDate(orig *glua.LFunction) *glua.LFunction {
	return c.L.NewFunction(func(L *glua.LState) int {
		if L.GetTop() >= 1 {
			c.checkLen("os.date", 32*len(L.CheckString(1)))
		}
		return orig.GFunction(L)
	})
}

// maxArrayIndex caps gopher-lua's array part. Setting t[n] beyond the end of
// a table's array part makes gopher-lua append nils up to n, so with its
// default cap (2^26) `t[67108863] = true` allocates 1 GiB and spins for
// tens of seconds in one instruction, where no deadline or watchdog can
// reach. Integer keys from 2^20 on go to the hash part instead, which bounds
// that to 16 MiB.
//
// gopher-lua has no per-state limit: the cap is its package variable
// MaxArrayIndex, read by every table operation. This is the only
// package-level state regatta changes in a dependency, and it is safe
// (TestMaxArrayIndexIsSafe): it is set once, in this package's init, before
// any state exists, and never written again (no race); only this package
// runs gopher-lua states (spec uses its parser alone; hack/check-deps.sh
// keeps it so), so no other code in the process expects the default. Its
// price: #t and ipairs see the array part only, so they stop at 2^20 - 1
// elements (t[i] and pairs see every element). No Kubernetes object can hold
// such an array (etcd's request limit, 1.5 MiB, is less than 2 bytes per
// element); only a script's own tables can.
const maxArrayIndex = 1 << 20

func init() { glua.MaxArrayIndex = maxArrayIndex }
