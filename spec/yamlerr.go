package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml2 "go.yaml.in/yaml/v2"
	yaml "go.yaml.in/yaml/v3"
)

// maxYAMLKey is the longest implicit key libyaml accepts.
const maxYAMLKey = 1024

// YAMLSyntaxError explains why data, which a YAML parser rejected with err,
// is not valid YAML: the 1-based line of the offending character or token
// and a message without the parser's "yaml: line N:" prefix. The parsers'
// own lines can be far off: go.yaml.in/yaml/v3 reports where the enclosing
// block starts (five lines early for a mis-indented key), v2 a 0-based line
// for parser errors, and neither a line for bad characters.
func YAMLSyntaxError(data []byte, err error) (int, string) {
	if line, msg, ok := badCharacter(data); ok {
		return line, msg
	}
	if line, ok := aliasBomb(data, err); ok {
		return line, "YAML aliases expand to too much data (an alias bomb?): expand the anchors you need and remove the others"
	}
	line, msg := problem(data)
	if line == 0 {
		line, msg = lineOf(err.Error())
	}
	if key, ok := longKey(data, line); ok {
		return key, fmt.Sprintf("a key of %d characters: YAML keys may have at most %d (a Kubernetes label or annotation key at most 317: a 253-character prefix, '/', a 63-character name)", longestKey(data, key), maxYAMLKey)
	}
	ctx := contextLine(data)
	if last := lastContentLine(data); line > last {
		// the parser ran into the end: point at what is left open
		if ctx != 0 && ctx < last {
			return ctx, msg
		}
		return last, msg
	}
	if ctx != 0 && ctx < line {
		msg += fmt.Sprintf(" (in the node that starts on line %d)", ctx)
	}
	return line, msg
}

// lastContentLine is the last line that is neither blank nor a comment.
func lastContentLine(data []byte) int {
	last := 0
	for i, l := range bytes.Split(data, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			last = i + 1
		}
	}
	return last
}

// badCharacter finds the first byte sequence YAML does not allow: invalid
// UTF-8 or a control character other than tab, line feed and carriage
// return (the parsers report these without a line).
func badCharacter(data []byte) (int, string, bool) {
	line, col := 1, 0
	for off := 0; off < len(data); {
		r, size := utf8.DecodeRune(data[off:])
		col++
		switch {
		case r == utf8.RuneError && size == 1:
			return line, fmt.Sprintf("column %d: invalid UTF-8 byte 0x%02x", col, data[off]), true
		case r == '\n':
			line, col = line+1, 0
		case !yamlPrintable(r):
			return line, fmt.Sprintf("column %d: control character %U is not allowed in YAML (write it as an escape, e.g. \"\\x%02x\", in a double-quoted string)", col, r, r), true
		}
		off += size
	}
	return 0, "", false
}

// yamlPrintable is YAML 1.2's c-printable set.
func yamlPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		return true
	case r < 0x20 || r == 0x7f:
		return false
	case r >= 0x80 && r < 0xa0:
		return false
	case r == 0xfffe || r == 0xffff:
		return false
	}
	return r != utf8.RuneError
}

// aliasBomb reports the line of the first alias when err is the decoders'
// excessive-aliasing guard.
func aliasBomb(data []byte, err error) (int, bool) {
	if err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		return 0, false
	}
	var n yaml.Node
	if yaml.Unmarshal(data, &n) != nil {
		return 0, true
	}
	return firstAlias(&n), true
}

func firstAlias(n *yaml.Node) int {
	if n.Kind == yaml.AliasNode {
		return n.Line
	}
	for _, c := range n.Content {
		if l := firstAlias(c); l != 0 {
			return l
		}
	}
	return 0
}

// parserErrors are libyaml's parser (not scanner) problems: go.yaml.in/yaml/v2
// reports them with a 0-based line.
var parserErrors = []string{
	"did not find expected <", "did not find expected key", "did not find expected ',' or",
	"did not find expected '-' indicator", "did not find expected node content",
	"found undefined tag handle", "found duplicate %", "found incompatible YAML document",
}

// problem parses data with go.yaml.in/yaml/v2, whose line is that of the
// offending token (v3 prefers the enclosing block's).
func problem(data []byte) (int, string) {
	dec := yaml2.NewDecoder(bytes.NewReader(data))
	for {
		var x any
		err := dec.Decode(&x)
		if errors.Is(err, io.EOF) {
			return 0, ""
		}
		if err == nil {
			continue
		}
		line, msg := lineOf(err.Error())
		for _, p := range parserErrors {
			if line > 0 && strings.HasPrefix(msg, p) {
				return line + 1, msg
			}
		}
		return line, msg
	}
}

// contextLine is the 1-based line of the node go.yaml.in/yaml/v3 names in
// its error: the enclosing block, or where an unterminated scalar starts.
func contextLine(data []byte) int {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			return 0
		}
		line, msg := lineOf(err.Error())
		for _, p := range parserErrors {
			if line > 0 && strings.HasPrefix(msg, p) {
				return line + 1
			}
		}
		return line // scanner errors: already 1-based
	}
}

// lineOf splits "yaml: line 3: msg" into 3 and msg.
func lineOf(msg string) (int, string) {
	msg = strings.TrimPrefix(msg, "yaml: ")
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, msg
	}
	num, text, ok := strings.Cut(rest, ": ")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return 0, msg
	}
	return n, text
}

// longKey finds a line at or just before line (the parsers point at either)
// holding a key longer than libyaml allows.
func longKey(data []byte, line int) (int, bool) {
	lines := bytes.Split(data, []byte("\n"))
	for l := line; l >= line-1 && l >= 1; l-- {
		if l <= len(lines) && longestKeyIn(lines[l-1]) > maxYAMLKey {
			return l, true
		}
	}
	return 0, false
}

func longestKey(data []byte, line int) int {
	return longestKeyIn(bytes.Split(data, []byte("\n"))[line-1])
}

// longestKeyIn is the length of the longest run of characters before a
// ':' on the line (roughly a key; only used to explain an error).
func longestKeyIn(line []byte) int {
	longest := 0
	for _, part := range bytes.Split(line, []byte(":"))[:max(1, bytes.Count(line, []byte(":")))] {
		fields := bytes.FieldsFunc(part, func(r rune) bool { return r == ' ' || r == '{' || r == ',' || r == '"' || r == '\'' })
		if len(fields) > 0 {
			longest = max(longest, utf8.RuneCount(fields[len(fields)-1]))
		}
	}
	return longest
}
