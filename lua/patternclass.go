package lua

// Character classes of Lua patterns: ".", "%a", "[a-z%d]" and their kin.

// classEnd returns the index just past the single-character class at p.
func (m *matcher) classEnd(p int) int {
	c := m.patAt(p)
	p++
	switch c {
	case patternEsc:
		if p >= len(m.pat) {
			m.fail("malformed pattern (ends with '%')")
		}
		return p + 1
	case '[':
		if m.patAt(p) == '^' {
			p++
		}
		for {
			if p >= len(m.pat) {
				m.fail("malformed pattern (missing ']')")
			}
			c := m.pat[p]
			p++
			if c == patternEsc && p < len(m.pat) {
				p++
			}
			if m.patAt(p) == ']' {
				return p + 1
			}
		}
	}
	return p
}

// singleMatch reports whether byte c matches the class pat[p:ep].
func (m *matcher) singleMatch(c, p, ep int) bool {
	switch m.pat[p] {
	case '.':
		return true
	case patternEsc:
		return matchClass(c, int(m.patAt(p+1)))
	case '[':
		return m.bracketClass(c, p, ep-1)
	}
	return int(m.pat[p]) == c
}

// bracketClass matches c against the set pat[p:ec], where pat[p] is '['
// and pat[ec] is ']'.
func (m *matcher) bracketClass(c, p, ec int) bool {
	sig := true
	if m.patAt(p+1) == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case m.pat[p] == patternEsc:
			p++
			if matchClass(c, int(m.patAt(p))) {
				return sig
			}
		case m.patAt(p+1) == '-' && p+2 < ec:
			p += 2
			if int(m.pat[p-2]) <= c && c <= int(m.pat[p]) {
				return sig
			}
		case int(m.pat[p]) == c:
			return sig
		}
	}
	return !sig
}

// matchClass matches c against the class letter cl (%a, %d, ... or a
// literal escaped byte). Upper-case letters negate.
func matchClass(c, cl int) bool {
	var res bool
	switch lower(cl) {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = c < 32 || c == 127
	case 'd':
		res = c >= '0' && c <= '9'
	case 'l':
		res = c >= 'a' && c <= 'z'
	case 'p':
		res = isPunct(c)
	case 's':
		res = c == ' ' || (c >= '\t' && c <= '\r')
	case 'u':
		res = c >= 'A' && c <= 'Z'
	case 'w':
		res = isAlpha(c) || (c >= '0' && c <= '9')
	case 'x':
		res = (c >= '0' && c <= '9') || (lower(c) >= 'a' && lower(c) <= 'f')
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if cl >= 'A' && cl <= 'Z' {
		return !res
	}
	return res
}

func lower(c int) int {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isAlpha(c int) bool { return lower(c) >= 'a' && lower(c) <= 'z' }

func isPunct(c int) bool {
	return c > 32 && c < 127 && !isAlpha(c) && !(c >= '0' && c <= '9')
}
