package lua

// A Lua 5.1 pattern matcher (the algorithm of lstrlib.c) that spends a step
// budget as it goes. gopher-lua's own matcher cannot be interrupted: it
// recurses once per subject byte for ".*" and backtracks without limit, so a
// single string.find over a few kilobytes can hold a goroutine for minutes,
// past any deadline. This one counts its work and asks the call's guard every
// stepChunk steps whether to go on, and nests at most maxMatchDepth deep.

const (
	maxCaptures     = 32
	maxMatchDepth   = 200
	stepChunk       = 1024
	capUnfinished   = -1
	capPosition     = -2
	patternEsc      = '%'
	patternSpecials = "^$*+?.([%-"
)

// patternError is raised (panicked) by the matcher and recovered by the
// string functions, which turn it into a Lua error.
type patternError struct{ msg string }

func (e patternError) Error() string { return e.msg }

type capture struct{ start, len int }

// matcher holds one match attempt over src.
type matcher struct {
	src, pat string
	level    int
	captures [maxCaptures]capture
	depth    int
	steps    int
	spend    func(steps int) // the guard; panics to stop the match
}

func (m *matcher) fail(msg string) { panic(patternError{msg}) }

// step counts one unit of work.
func (m *matcher) step() {
	m.steps++
	if m.steps >= stepChunk {
		m.spend(m.steps)
		m.steps = 0
	}
}

// at returns the subject byte at s, or 0 past its end (C's terminator).
func (m *matcher) at(s int) int {
	if s < len(m.src) {
		return int(m.src[s])
	}
	return 0
}

// patAt returns the pattern byte at p, or 0 past its end.
func (m *matcher) patAt(p int) byte {
	if p < len(m.pat) {
		return m.pat[p]
	}
	return 0
}

// match returns the end of the match of pat[p:] at src[s:], or -1.
func (m *matcher) match(s, p int) int {
	m.depth++
	if m.depth > maxMatchDepth {
		m.fail("pattern too complex")
	}
	defer func() { m.depth-- }()
	for {
		m.step()
		if p >= len(m.pat) {
			return s
		}
		switch m.pat[p] {
		case '(':
			if m.patAt(p+1) == ')' {
				return m.startCapture(s, p+2, capPosition)
			}
			return m.startCapture(s, p+1, capUnfinished)
		case ')':
			return m.endCapture(s, p+1)
		case '$':
			if p+1 == len(m.pat) {
				if s == len(m.src) {
					return s
				}
				return -1
			}
		case patternEsc:
			ns, np, done := m.escape(s, p)
			if done {
				return ns
			}
			if np >= 0 {
				s, p = ns, np
				continue
			}
		}
		ns, np, done := m.single(s, p)
		if done {
			return ns
		}
		s, p = ns, np
	}
}

// escape handles %b, %f and back-references. It returns done with the
// result, or the next positions, or np < 0 when p is a plain class like %a.
func (m *matcher) escape(s, p int) (ns, np int, done bool) {
	switch next := m.patAt(p + 1); {
	case next == 'b':
		s = m.balance(s, p+2)
		if s < 0 {
			return -1, 0, true
		}
		return s, p + 4, false
	case next == 'f':
		return m.frontier(s, p+2)
	case next >= '0' && next <= '9':
		s = m.backref(s, int(next))
		if s < 0 {
			return -1, 0, true
		}
		return s, p + 2, false
	}
	return 0, -1, false
}

// single matches one pattern item with its optional quantifier.
func (m *matcher) single(s, p int) (ns, np int, done bool) {
	ep := m.classEnd(p)
	ok := s < len(m.src) && m.singleMatch(m.at(s), p, ep)
	switch m.patAt(ep) {
	case '?':
		if ok {
			if res := m.match(s+1, ep+1); res >= 0 {
				return res, 0, true
			}
		}
		return s, ep + 1, false
	case '*':
		return m.maxExpand(s, p, ep), 0, true
	case '+':
		if !ok {
			return -1, 0, true
		}
		return m.maxExpand(s+1, p, ep), 0, true
	case '-':
		return m.minExpand(s, p, ep), 0, true
	}
	if !ok {
		return -1, 0, true
	}
	return s + 1, ep, false
}

func (m *matcher) maxExpand(s, p, ep int) int {
	i := 0
	for s+i < len(m.src) && m.singleMatch(m.at(s+i), p, ep) {
		m.step()
		i++
	}
	for ; i >= 0; i-- {
		if res := m.match(s+i, ep+1); res >= 0 {
			return res
		}
	}
	return -1
}

func (m *matcher) minExpand(s, p, ep int) int {
	for {
		if res := m.match(s, ep+1); res >= 0 {
			return res
		}
		if s < len(m.src) && m.singleMatch(m.at(s), p, ep) {
			s++
			continue
		}
		return -1
	}
}

func (m *matcher) startCapture(s, p, what int) int {
	if m.level >= maxCaptures {
		m.fail("too many captures")
	}
	m.captures[m.level] = capture{start: s, len: what}
	m.level++
	res := m.match(s, p)
	if res < 0 {
		m.level--
	}
	return res
}

func (m *matcher) endCapture(s, p int) int {
	l := m.captureToClose()
	m.captures[l].len = s - m.captures[l].start
	res := m.match(s, p)
	if res < 0 {
		m.captures[l].len = capUnfinished
	}
	return res
}

func (m *matcher) captureToClose() int {
	for l := m.level - 1; l >= 0; l-- {
		if m.captures[l].len == capUnfinished {
			return l
		}
	}
	m.fail("invalid pattern capture")
	return 0
}

func (m *matcher) balance(s, p int) int {
	if p+1 >= len(m.pat) {
		m.fail("unbalanced pattern")
	}
	if s >= len(m.src) || m.src[s] != m.pat[p] {
		return -1
	}
	open, close, depth := m.pat[p], m.pat[p+1], 1
	for s++; s < len(m.src); s++ {
		m.step()
		switch m.src[s] {
		case close:
			if depth--; depth == 0 {
				return s + 1
			}
		case open:
			depth++
		}
	}
	return -1
}

func (m *matcher) frontier(s, p int) (ns, np int, done bool) {
	if m.patAt(p) != '[' {
		m.fail("missing '[' after '%f' in pattern")
	}
	ep := m.classEnd(p)
	prev := 0
	if s > 0 {
		prev = m.at(s - 1)
	}
	if m.bracketClass(prev, p, ep-1) || !m.bracketClass(m.at(s), p, ep-1) {
		return -1, 0, true
	}
	return s, ep, false
}

func (m *matcher) backref(s, digit int) int {
	l := digit - '1'
	if l < 0 || l >= m.level || m.captures[l].len == capUnfinished {
		m.fail("invalid capture index")
	}
	c := m.captures[l]
	if len(m.src)-s >= c.len && m.src[c.start:c.start+c.len] == m.src[s:s+c.len] {
		return s + c.len
	}
	return -1
}
