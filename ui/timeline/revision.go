package timeline

import (
	"bytes"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// recordRevision is the sourceRevision of a cluster record. The timeline
// reads it from every record each status commit wrote, so the line
// status.Files writes (`sourceRevision: <commit>` at the top level, the
// hash plain or double-quoted) is read without decoding the whole record;
// anything else is decoded as YAML.
func recordRevision(b []byte) (string, error) {
	if rev, ok := plainRevision(b); ok {
		return rev, nil
	}
	var rec struct {
		SourceRevision string `yaml:"sourceRevision"`
	}
	err := yaml.Unmarshal(b, &rec)
	return rec.SourceRevision, err
}

// plainRevision finds a top-level `sourceRevision: <hash>` line whose
// value YAML reads as that very string: a commit hash (40 or 64 lowercase
// hex digits with a letter YAML cannot take for a number), unquoted or in
// double quotes without escapes.
func plainRevision(b []byte) (string, bool) {
	const key = "sourceRevision:"
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		b = rest
		if !bytes.HasPrefix(line, []byte(key)) {
			continue
		}
		v := strings.TrimSpace(string(line[len(key):]))
		if q, ok := strings.CutPrefix(v, `"`); ok {
			v, ok = strings.CutSuffix(q, `"`)
			return v, ok && isHash(v)
		}
		return v, isHash(v) && strings.ContainsAny(v, "abcdf")
	}
	return "", false
}

func isHash(v string) bool {
	return (len(v) == 40 || len(v) == 64) && strings.Trim(v, "0123456789abcdef") == ""
}
