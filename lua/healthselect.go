package lua

import (
	"fmt"
	"path"
	"strings"
)

// HealthSelector picks the health script for a kind among scripts keyed by
// group and kind, either of which may hold globs ("*", "?", "[a-z]" as in
// path.Match). As in Argo CD's resource overrides, a key is matched as one
// string, "Kind" for the core group (group "") and "group/Kind" otherwise,
// and "*" may span the "/": kind "*" alone matches every kind of every
// group, group "*" with kind "*" every kind outside the core group, and
// group "*.crossplane.io" with kind "*" every Crossplane kind. When several
// keys match, the most specific wins: an exact key before any glob, then
// the key with more literal characters, then the one added first. Built-in
// scripts are used only when no added key matches, as in Argo CD.
type HealthSelector struct {
	entries []healthEntry
}

type healthEntry struct {
	pattern string // the key, with keySeparator between group and kind
	literal int    // characters of group and kind that are not glob syntax
	exact   bool
	script  Script
}

// keySeparator joins group and kind in matched keys. path.Match's "*" does
// not span "/", and Argo CD's does; no group or kind holds a ":", so
// joining with it lets "*" span the two as Argo CD's does.
const keySeparator = ":"

func healthKey(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + keySeparator + kind
}

// Add registers s for the group and kind patterns. It fails on a malformed
// pattern (an unclosed "[").
func (h *HealthSelector) Add(group, kind string, s Script) error {
	for _, p := range []string{group, kind} {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("health check key %q: %w", p, err)
		}
	}
	h.entries = append(h.entries, healthEntry{
		pattern: healthKey(group, kind),
		literal: literalLen(group) + literalLen(kind),
		exact:   !IsHealthGlob(group) && !IsHealthGlob(kind),
		script:  s,
	})
	return nil
}

// Script returns the script for group and kind: the most specific added
// key that matches, else the built-in script for the kind, if any.
func (h *HealthSelector) Script(group, kind string) (Script, bool) {
	key := healthKey(group, kind)
	var best *healthEntry
	for i := range h.entries {
		e := &h.entries[i]
		if ok, _ := path.Match(e.pattern, key); ok && (best == nil || e.moreSpecific(best)) {
			best = e
		}
	}
	if best != nil {
		return best.script, true
	}
	src, ok := BuiltinHealth(group, kind)
	if !ok {
		return Script{}, false
	}
	return Script{Name: "builtin health " + GroupKind{group, kind}.String(), Source: src}, true
}

// moreSpecific orders candidates; on a tie the earlier entry stays.
func (e *healthEntry) moreSpecific(o *healthEntry) bool {
	if e.exact != o.exact {
		return e.exact
	}
	return e.literal > o.literal
}

// IsHealthGlob reports whether a health check group or kind is a pattern.
func IsHealthGlob(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// literalLen counts the characters of p that match only themselves.
func literalLen(p string) int {
	n := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?':
		case '[':
			j := strings.IndexByte(p[i:], ']')
			if j < 0 {
				return n
			}
			i += j
		case '\\':
			i++
			n++
		default:
			n++
		}
	}
	return n
}
