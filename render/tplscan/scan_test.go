package tplscan

import (
	"strings"
	"testing"
)

var lim = Limits{MaxIterations: 5_000_000, MaxSize: 4 << 20}

func TestScanFindsLiteralBombs(t *testing.T) {
	for _, tc := range []struct {
		text, want string
		line       int
	}{
		{"a\n{{ range 100000000000000 }}{{ end }}", "range of 100000000000000 iterations", 2},
		{"{{ range 100000 }}\n{{ range 100000 }}{{ end }}{{ end }}", "range of 10000000000 iterations", 2},
		{"{{ range until 2000000000 }}{{ end }}", "range of 2000000000 iterations", 1},
		{"{{ len (until 2000000000) }}", "until would build 16000000000 bytes", 1},
		{"{{ untilStep 0 2000000000 1 }}", "untilStep would build", 1},
		{"{{ seq 1 2000000000 }}", "seq would build", 1},
		{`{{ repeat 4000000000 "x" }}`, "repeat would build 4000000000 bytes", 1},
		{`{{ "x" | repeat 4000000000 }}`, "repeat would build 4000000000 bytes", 1},
		{`{{ indent 4000000000 .x }}`, "indent would build", 1},
		{`{{ randAlpha 4000000000 }}`, "randAlpha would build", 1},
		{"{{ define \"x\" }}\n\n{{ repeat 9000000000 \"y\" }}{{ end }}", "repeat would build", 3},
		{`{{ range 1000 }}{{ repeat 1000000 "x" }}{{ end }}`, "repeat in loops of 1000 iterations", 1},
	} {
		found := Scan("t.yaml", tc.text, lim)
		ok := false
		for _, f := range found {
			ok = ok || strings.Contains(f.Msg, tc.want) && f.Line == tc.line
		}
		if !ok {
			t.Errorf("%s: found %v, want one at line %d with %q", tc.text, found, tc.line, tc.want)
		}
	}
}

func TestScanLeavesOrdinaryTemplatesAlone(t *testing.T) {
	for _, text := range []string{
		"no template",
		`{{ range until 10 }}{{ . }}{{ end }}`,
		`{{ range $i := until (int .Values.n) }}{{ $i }}{{ end }}`,
		`{{ repeat 3 "x" | indent 4 }}{{ nindent 8 (toYaml .Values) }}`,
		`{{ range 1000 }}{{ range 1000 }}{{ end }}{{ end }}`,
		`{{ if }}`, // a parse error: the engine reports it
	} {
		if found := Scan("t.yaml", text, lim); len(found) != 0 {
			t.Errorf("%s: found %v", text, found)
		}
	}
}
