package lua

import (
	"fmt"
	"path"
	"strings"
)

// HealthSelector picks the health script for a kind among scripts keyed by
// group and kind patterns, which may be globs as path.Match reads them
// ("*", "?", "[a-z]"): kind "*" with group "*.crossplane.io" covers every
// Crossplane kind. An empty group is the core group; group "*" matches
// every group, the core group included. When several keys match, the most
// specific wins: an exact key before any glob, then the key with more
// exact fields (group "" or "apps" rather than a glob), then the key with
// more literal characters, then the one added first. Built-in scripts are used
// only when no added key matches, as in Argo CD.
type HealthSelector struct {
	entries []healthEntry
}

type healthEntry struct {
	group, kind string
	literal     int // characters that are not glob syntax
	exactFields int // 0, 1 or 2 of group and kind are not globs
	script      Script
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
		group:       group,
		kind:        kind,
		literal:     literalLen(group) + literalLen(kind),
		exactFields: boolInt(!IsHealthGlob(group)) + boolInt(!IsHealthGlob(kind)),
		script:      s,
	})
	return nil
}

// Script returns the script for group and kind: the most specific added
// key that matches, else the built-in script for the kind, if any.
func (h *HealthSelector) Script(group, kind string) (Script, bool) {
	var best *healthEntry
	for i := range h.entries {
		e := &h.entries[i]
		if e.matches(group, kind) && (best == nil || e.moreSpecific(best)) {
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

func (e *healthEntry) matches(group, kind string) bool {
	g, _ := path.Match(e.group, group)
	k, _ := path.Match(e.kind, kind)
	return g && k
}

// moreSpecific orders candidates; on a tie the earlier entry stays.
func (e *healthEntry) moreSpecific(o *healthEntry) bool {
	if e.exactFields != o.exactFields {
		return e.exactFields > o.exactFields
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
