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

// splitGeneration finds a record's one top-level generation line: its
// value, and the record without it. ok is false without exactly one such
// line holding a positive number.
func splitGeneration(rec []byte) (gen int64, rest []byte, ok bool) {
	at := -1
	for i := 0; i < len(rec); {
		end := bytes.IndexByte(rec[i:], '\n')
		if end < 0 {
			return 0, nil, false // marshal ends every line
		}
		end += i + 1
		if bytes.HasPrefix(rec[i:end], []byte(generationKey)) {
			if at >= 0 {
				return 0, nil, false
			}
			v := strings.TrimSuffix(string(rec[i+len(generationKey):end]), "\n")
			if gen, _ = strconv.ParseInt(v, 10, 64); gen <= 0 || strconv.FormatInt(gen, 10) != v {
				return 0, nil, false
			}
			at = i
			rest = append(append(make([]byte, 0, len(rec)-(end-i)), rec[:i]...), rec[end:]...)
		}
		i = end
	}
	return gen, rest, at >= 0
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
