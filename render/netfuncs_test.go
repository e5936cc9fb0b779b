package render

import (
	"testing"

	"github.com/regatta-dev/regatta/spec"
)

// TestTemplatesHaveNoHostFunctions: templates cannot look names up from
// the daemon's network nor read its environment.
func TestTemplatesHaveNoHostFunctions(t *testing.T) {
	for fn, call := range map[string]string{
		"getHostByName": `{{ getHostByName "metadata.google.internal" }}`,
		"env":           `{{ env "HOME" }}`,
		"expandenv":     `{{ expandenv "$HOME" }}`,
	} {
		data := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {v: \"" + call + "\"}\n"
		_, err := adhoc(t, Options{}, map[string]string{"x/cm.yaml": data},
			spec.Addon{Name: "x", Template: true, Manifests: &spec.ManifestsSource{Path: "x"}})
		assertError(t, err, "plain", `function "`+fn+`" not defined`, "x/cm.yaml", 4)
	}
}
