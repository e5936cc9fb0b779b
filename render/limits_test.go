package render

import (
	"context"
	"errors"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// templateBombs are templates that would run for ever or allocate
// gigabytes without TemplateLimits.
var templateBombs = []struct{ name, body string }{
	{"empty loop", `{{ range 100000000000000 }}{{ end }}`},
	{"nested loops", `{{ range 100000 }}{{ range 100000 }}{{ end }}{{ end }}`},
	{"until", `{{ len (until 2000000000) }}`},
	{"untilStep", `{{ len (untilStep 0 2000000000 1) }}`},
	{"seq", `{{ seq 2000000000 }}`},
	{"repeat", `{{ repeat 4000000000 "x" }}`},
	{"indent", `{{ indent 4000000000 "x" }}`},
	{"randAlpha", `{{ randAlpha 4000000000 }}`},
	{"replace with empty old", `{{ replace "" (repeat 1000000 "y") (repeat 1000000 "x") }}`},
	{"doubling print", `{{ $s := "xxxxxxxx" }}{{ range 40 }}{{ $s = print $s $s }}{{ end }}{{ len $s }}`},
	{"doubling list", `{{ $l := list "x" }}{{ range 60 }}{{ $l = concat $l $l }}{{ end }}{{ len $l }}`},
	{"shared list printed", `{{ $l := list "xxxxxxxx" }}{{ range 60 }}{{ $l = list $l $l }}{{ end }}{{ toJson $l }}`},
	{"self-containing dict", `{{ $d := dict }}{{ $_ := set $d "a" $d }}{{ toJson $d }}`},
	{"printf widths", `{{ range 100000 }}{{ printf "%1000000d" 1 }}{{ end }}`},
	{"output", `{{ range 100000000 }}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{ end }}`},
	{"exponential recursion", `{{ define "x" }}{{ if lt (len .) 60 }}{{ template "x" (print . "a") }}{{ template "x" (print . "a") }}{{ end }}{{ end }}{{ template "x" "" }}`},
}

// checkBomb renders req, which holds a bomb, and checks that it fails
// with ErrTemplateLimit at file (and line, when > 0) within bounded time
// and memory.
func checkBomb(t *testing.T, r *Renderer, req Request, file string, line int) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := r.Render(context.Background(), req)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTemplateLimit) {
		t.Fatalf("err = %v, want ErrTemplateLimit", err)
	}
	var re *Error
	if !errors.As(err, &re) || re.File != file || (line > 0 && re.Line != line) {
		t.Errorf("err = %v, want it at %s:%d", err, file, line)
	}
	if elapsed > 4*r.limits.Timeout {
		t.Errorf("took %s; the timeout is %s", elapsed, r.limits.Timeout)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<30 {
		t.Errorf("allocated %d MiB", alloc>>20)
	}
}

// bigLiteral is a literal count in a bomb; computed replaces it by the
// same number computed at run time, which only the execution limits see
// (a literal one is refused before running: tplscan).
var bigLiteral = regexp.MustCompile(`([ (])(\d{4,})([ )])`)

func bombVariants(body string) map[string]string {
	return map[string]string{
		"literal":  body,
		"computed": bigLiteral.ReplaceAllString(body, `${1}(int "${2}")${3}`),
	}
}

func TestTemplateBombsInFilesFail(t *testing.T) {
	for _, b := range templateBombs {
		for variant, body := range bombVariants(b.body) {
			t.Run(b.name+"/"+variant, func(t *testing.T) {
				fsys := readsRepo(body)
				req := Request{FS: fsys, Revision: "rev1", Profile: loadProfile(t, fsys, "t"), Cluster: readsCluster()}
				checkBomb(t, New(Options{}), req, "addons/a/cm.yaml", 6)
			})
		}
	}
}

func TestTemplateBombsInPathsFail(t *testing.T) {
	for _, b := range templateBombs {
		for variant, body := range bombVariants(b.body) {
			t.Run(b.name+"/"+variant, func(t *testing.T) {
				fsys := pathsRepo("addons/" + strings.ReplaceAll(body, `'`, `''`) + "prod")
				req := Request{FS: fsys, Revision: "rev1", Profile: loadProfile(t, fsys, "p"), Cluster: readsCluster()}
				checkBomb(t, New(Options{}), req, "profiles/p.yaml", 8)
			})
		}
	}
}

// TestTemplateLimitsLeaveRealTemplatesAlone: loops, recursion and
// functions of ordinary size run under the default limits.
func TestTemplateLimitsLeaveRealTemplatesAlone(t *testing.T) {
	body := `{{ range $i := until 1000 }}{{ $i }}{{ end }}{{ repeat 1000 "x" }}{{ printf "%10d" 1 }}{{ indent 8 "y" }}`
	fsys := readsRepo(body)
	req := Request{FS: fsys, Revision: "rev1", Profile: loadProfile(t, fsys, "t"), Cluster: readsCluster()}
	res := mustRender(t, New(Options{}), req)
	v, _, _ := unstructured.NestedString(res.Objects()[0].Object, "data", "v")
	if !strings.Contains(v, "998999") || !strings.Contains(v, strings.Repeat("x", 1000)) {
		t.Errorf("output %.80q... lacks the loop's or repeat's output", v)
	}
}
