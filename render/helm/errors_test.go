package helm

import (
	"errors"
	"testing"
)

func TestTemplateErrorLocation(t *testing.T) {
	cases := []struct{ in, want string }{
		{`template: app/templates/deployment.yaml:12:14: executing "app/templates/deployment.yaml" at <.Values.x.y>: nil pointer evaluating interface {}.y`,
			"templates/deployment.yaml:12: at <.Values.x.y>: nil pointer evaluating interface {}.y"},
		{`parse error at (app/templates/svc.yaml:7): function "nope" not defined`,
			`templates/svc.yaml:7: function "nope" not defined`},
		{`execution error at (app/templates/cm.yaml:3:4): image.tag is required`,
			"templates/cm.yaml:3: image.tag is required"},
		{`template: app/templates/a.yaml:2:3: executing "app/templates/a.yaml" at <include "x" .>: error calling include: template: app/charts/sub/templates/_h.tpl:5:6: executing "x" at <.Values.q>: boom`,
			"charts/sub/templates/_h.tpl:5: at <.Values.q>: boom"},
		{`YAML parse error on app/templates/bad.yaml: error converting YAML to JSON: yaml: line 5: did not find expected key`,
			"templates/bad.yaml:5: rendered YAML: error converting YAML to JSON: yaml: line 5: did not find expected key"},
		{`something else`, "something else"},
	}
	for _, c := range cases {
		in := errors.New(c.in)
		got := templateError("app", in)
		if got.Error() != c.want {
			t.Errorf("%s\n got: %s\nwant: %s", c.in, got, c.want)
		}
		if !errors.Is(got, in) {
			t.Errorf("%s: does not wrap the original", c.in)
		}
	}
}
