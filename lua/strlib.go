package lua

import (
	"strings"

	glua "github.com/yuin/gopher-lua"
)

// string.find, string.match, string.gmatch and string.gsub on the budgeted
// matcher of pattern.go, with Lua 5.1 semantics.

func (c *call) newMatcher(src, pat string) *matcher {
	return &matcher{src: src, pat: pat, spend: c.spendSteps}
}

// spendSteps charges pattern work to the guard and stops the match when the
// call is over its deadline or budget.
func (c *call) spendSteps(n int) {
	if err := c.g.tick(int64(n)); err != nil {
		panic(patternError{err.Error()})
	}
}

// runMatch runs fn and turns a pattern error into a Lua error. Other panics
// (Lua errors raised by replacement functions) pass through.
func (c *call) runMatch(fn func()) {
	var failed *patternError
	func() {
		defer func() {
			if r := recover(); r != nil {
				pe, ok := r.(patternError)
				if !ok {
					panic(r)
				}
				failed = &pe
			}
		}()
		fn()
	}()
	if failed != nil {
		c.L.RaiseError("%s", failed.msg)
	}
}

func (c *call) strFind(L *glua.LState) int  { return c.findAux(L, true) }
func (c *call) strMatch(L *glua.LState) int { return c.findAux(L, false) }

func (c *call) findAux(L *glua.LState, find bool) int {
	s, p := L.CheckString(1), L.CheckString(2)
	init := min(max(relativePos(L.OptInt(3, 1), len(s))-1, 0), len(s))
	if find && (L.ToBool(4) || !strings.ContainsAny(p, patternSpecials)) {
		i := strings.Index(s[init:], p)
		if i < 0 {
			L.Push(glua.LNil)
			return 1
		}
		L.Push(glua.LNumber(init + i + 1))
		L.Push(glua.LNumber(init + i + len(p)))
		return 2
	}
	n := 0
	c.runMatch(func() { n = c.findPattern(L, s, p, init, find) })
	return n
}

func (c *call) findPattern(L *glua.LState, s, p string, init int, find bool) int {
	anchor := strings.HasPrefix(p, "^")
	m := c.newMatcher(s, strings.TrimPrefix(p, "^"))
	for s1 := init; ; s1++ {
		m.level = 0
		if e := m.match(s1, 0); e >= 0 {
			if !find {
				return pushCaptures(L, m, s1, e, true)
			}
			L.Push(glua.LNumber(s1 + 1))
			L.Push(glua.LNumber(e))
			return pushCaptures(L, m, s1, e, false) + 2
		}
		if s1 >= len(s) || anchor {
			break
		}
	}
	L.Push(glua.LNil)
	return 1
}

func (c *call) strGmatch(L *glua.LState) int {
	s, p := L.CheckString(1), L.CheckString(2)
	pos := 0
	L.Push(L.NewFunction(func(L *glua.LState) int {
		n := 0
		c.runMatch(func() {
			m := c.newMatcher(s, p)
			for src := pos; src <= len(s); src++ {
				m.level = 0
				if e := m.match(src, 0); e >= 0 {
					pos = e + boolInt(e == src)
					n = pushCaptures(L, m, src, e, true)
					return
				}
			}
			pos = len(s) + 1
		})
		return n
	}))
	return 1
}

func (c *call) strGsub(L *glua.LState) int {
	src, p := L.CheckString(1), L.CheckString(2)
	repl := L.Get(3)
	switch repl.Type() {
	case glua.LTNumber, glua.LTString, glua.LTTable, glua.LTFunction:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	limit := L.OptInt(4, len(src)+1)
	var b strings.Builder
	n := 0
	c.runMatch(func() { n = c.gsub(L, &b, src, p, repl, limit) })
	L.Push(glua.LString(b.String()))
	L.Push(glua.LNumber(n))
	return 2
}

func (c *call) gsub(L *glua.LState, b *strings.Builder, src, p string, repl glua.LValue, limit int) int {
	anchor := strings.HasPrefix(p, "^")
	m := c.newMatcher(src, strings.TrimPrefix(p, "^"))
	s, n := 0, 0
loop:
	for n < limit {
		m.level = 0
		e := m.match(s, 0)
		if e >= 0 {
			n++
			c.addReplacement(L, b, m, s, e, repl)
		}
		switch {
		case e > s:
			s = e
		case s < len(src):
			b.WriteByte(src[s])
			s++
		default:
			break loop
		}
		if anchor {
			break
		}
	}
	b.WriteString(src[s:])
	c.checkLen("string.gsub", b.Len())
	return n
}

// addReplacement appends the replacement of the match src[s:e].
func (c *call) addReplacement(L *glua.LState, b *strings.Builder, m *matcher, s, e int, repl glua.LValue) {
	var v glua.LValue
	switch r := repl.(type) {
	case glua.LString, glua.LNumber:
		c.addReplString(b, m, s, e, glua.LVAsString(r))
		c.checkLen("string.gsub", b.Len())
		return
	case *glua.LFunction:
		L.Push(r)
		L.Call(pushCaptures(L, m, s, e, true), 1)
		v = L.Get(-1)
		L.Pop(1)
	case *glua.LTable:
		v = L.GetTable(r, m.captureValue(0, s, e))
	}
	switch {
	case !glua.LVAsBool(v):
		b.WriteString(m.src[s:e])
	case isStringy(v):
		b.WriteString(glua.LVAsString(v))
	default:
		L.RaiseError("invalid replacement value (a %s)", v.Type().String())
	}
	c.checkLen("string.gsub", b.Len())
}

// addReplString expands %0-%9 and %% in a replacement string.
func (c *call) addReplString(b *strings.Builder, m *matcher, s, e int, repl string) {
	for i := 0; i < len(repl); i++ {
		ch := repl[i]
		if ch != patternEsc || i+1 >= len(repl) {
			b.WriteByte(ch)
			continue
		}
		i++
		switch d := repl[i]; {
		case d == '0':
			b.WriteString(m.src[s:e])
		case d >= '1' && d <= '9':
			b.WriteString(glua.LVAsString(m.captureValue(int(d-'1'), s, e)))
		default:
			b.WriteByte(d)
		}
		c.checkLen("string.gsub", b.Len())
	}
}

// pushCaptures pushes the captures of a match, or the whole match when the
// pattern has none and whole is set. It returns how many it pushed.
func pushCaptures(L *glua.LState, m *matcher, s, e int, whole bool) int {
	n := m.level
	if n == 0 && whole {
		n = 1
	}
	for i := 0; i < n; i++ {
		L.Push(m.captureValue(i, s, e))
	}
	return n
}

// captureValue returns capture i of the match src[s:e].
func (m *matcher) captureValue(i, s, e int) glua.LValue {
	if i >= m.level {
		if i != 0 {
			m.fail("invalid capture index")
		}
		return glua.LString(m.src[s:e])
	}
	switch c := m.captures[i]; c.len {
	case capUnfinished:
		m.fail("unfinished capture")
	case capPosition:
		return glua.LNumber(c.start + 1)
	default:
		return glua.LString(m.src[c.start : c.start+c.len])
	}
	return glua.LNil
}

// relativePos turns a negative Lua string position into a positive one.
func relativePos(pos, n int) int {
	if pos < 0 {
		pos += n + 1
	}
	return max(pos, 0)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
