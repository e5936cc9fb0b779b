package app

import (
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/spec"
)

// checkCharts scans the chart folders of the profiles' Helm add-ons (those
// whose path is not templated) for literal template bombs, once per
// folder. Loading errors are left to the render, which reports them with
// the add-on.
func checkCharts(fsys fs.FS, repo *spec.Repository) spec.Diagnostics {
	var out spec.Diagnostics
	seen := map[string]bool{}
	for _, p := range repo.Profiles {
		for _, a := range p.Spec.Addons {
			if a.Helm == nil || a.Helm.Path == "" || strings.Contains(a.Helm.Path, "{{") {
				continue
			}
			dir := path.Clean(a.Helm.Path)
			if seen[dir] || !fs.ValidPath(dir) {
				continue
			}
			seen[dir] = true
			var te *helm.TemplateError
			if err := helm.ScanChartFolder(fsys, dir); errors.Is(err, helm.ErrTemplateLimit) && errors.As(err, &te) {
				out = append(out, spec.Diagnostic{
					Severity: spec.SeverityError,
					File:     path.Join(dir, te.File),
					Line:     te.Line,
					Message:  "helm: " + te.Msg,
				})
			}
		}
	}
	return out
}
