package helm

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"
)

// TestChartTemplateBombsFail: literal bombs in a chart's templates or a
// subchart's fail before Helm runs them, naming the file and line.
func TestChartTemplateBombsFail(t *testing.T) {
	for name, body := range map[string]string{
		"range":  "{{ range 100000000000000 }}{{ end }}",
		"until":  "{{ len (until 2000000000) }}",
		"repeat": `{{ repeat 4000000000 "x" }}`,
	} {
		for _, sub := range []bool{false, true} {
			m := fstest.MapFS{}
			chartFolder(t, m, "cache", "addons/app")
			file, want := "addons/app/templates/bomb.yaml", "templates/bomb.yaml"
			if sub {
				m["addons/app/charts/sub/Chart.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v2\nname: sub\nversion: 0.1.0\n")}
				file, want = "addons/app/charts/sub/templates/bomb.yaml", "charts/sub/templates/bomb.yaml"
			}
			m[file] = &fstest.MapFile{Data: []byte("# a bomb\n\n" + body + "\n")}
			req := Request{ChartFS: m, ChartPath: "addons/app", ReleaseName: "app", ReleaseNamespace: "ns"}
			_, err := newTestRenderer(t).Render(context.Background(), req)
			var te *TemplateError
			if !errors.Is(err, ErrTemplateLimit) || !errors.As(err, &te) || te.File != want || te.Line != 3 {
				t.Errorf("%s (subchart %v): err = %v, want ErrTemplateLimit at %s:3", name, sub, err, want)
			}
		}
	}
}
