package status

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// generationKey is the top-level line that numbers a record's writes.
const generationKey = "generation: "

// generationLine finds a record's one top-level generation line: its
// value, and where the line starts and ends (after its newline). ok is
// false without exactly one such line holding a positive number.
func generationLine(rec []byte) (gen int64, start, end int, ok bool) {
	start = -1
	for i := 0; i < len(rec); {
		n := bytes.IndexByte(rec[i:], '\n')
		if n < 0 {
			return 0, 0, 0, false // marshal ends every line
		}
		next := i + n + 1
		if bytes.HasPrefix(rec[i:next], []byte(generationKey)) {
			if start >= 0 {
				return 0, 0, 0, false
			}
			v := string(rec[i+len(generationKey) : next-1])
			if gen, _ = strconv.ParseInt(v, 10, 64); gen <= 0 || strconv.FormatInt(gen, 10) != v {
				return 0, 0, 0, false
			}
			start, end = i, next
		}
		i = next
	}
	return gen, start, end, start >= 0
}

// equalWithout reports whether rec without its bytes from start to end
// is other.
func equalWithout(rec []byte, start, end int, other []byte) bool {
	return len(other) == len(rec)-(end-start) && bytes.Equal(rec[:start], other[:start]) && bytes.Equal(rec[end:], other[start:])
}

// withGeneration is rec, marshal's output for a record without a
// generation, with the generation line marshal writes for gen: before the
// first top-level field that follows Generation in ClusterStatus. ok is
// false when rec has a generation line or no such field.
func withGeneration(rec []byte, gen int64) ([]byte, bool) {
	after := fieldsAfterGeneration()
	for i := 0; i < len(rec); {
		end := bytes.IndexByte(rec[i:], '\n')
		if end < 0 {
			return nil, false
		}
		line := rec[i : i+end]
		if bytes.HasPrefix(line, []byte(generationKey)) {
			return nil, false
		}
		if k, _, found := bytes.Cut(line, []byte(":")); found && after[string(k)] {
			g := generationKey + strconv.FormatInt(gen, 10) + "\n"
			out := make([]byte, 0, len(rec)+len(g))
			return append(append(append(out, rec[:i]...), g...), rec[i:]...), true
		}
		i += end + 1
	}
	return nil, false
}

// fieldsAfterGeneration are the YAML keys of ClusterStatus's fields
// declared after Generation: marshal writes fields in declaration order.
var fieldsAfterGeneration = sync.OnceValue(func() map[string]bool {
	t := reflect.TypeFor[ClusterStatus]()
	keys := map[string]bool{}
	seen := false
	for i := range t.NumField() {
		f := t.Field(i)
		if seen {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			keys[name] = true
		}
		seen = seen || f.Name == "Generation"
	}
	return keys
})
