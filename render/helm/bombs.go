package helm

import (
	"errors"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/regatta-dev/regatta/render/tplscan"
)

// ErrTemplateLimit is the failure of a chart template that would pass
// the template limits.
var ErrTemplateLimit = errors.New("template limit exceeded")

// Chart templates run in Helm's engine, which cannot be bounded while it
// runs: engine.Engine (v3.22) takes no context and no function map (its
// sprig functions are fixed), and text/template has no cancellation, so a
// loop that calls nothing cannot be stopped. What can be done before it
// runs is done: every template of the chart and its subcharts is scanned
// for literal bombs (loops and sizes written as numbers that pass the
// limits). Data-dependent sizes are not caught; see docs/format.md.
var chartScanLimits = tplscan.Limits{MaxIterations: 5_000_000, MaxSize: 4 << 20}

// scanChart returns the first literal bomb in c's templates or its
// subcharts', as a *TemplateError naming the file (charts/<sub>/... for a
// subchart) and line.
func scanChart(c *chart.Chart, prefix string) error {
	for _, f := range c.Templates {
		found := tplscan.Scan(f.Name, string(f.Data), chartScanLimits)
		if len(found) > 0 {
			return &TemplateError{
				File: prefix + f.Name,
				Line: found[0].Line,
				Msg:  fmt.Sprintf("%s: %s", ErrTemplateLimit, found[0].Msg),
				Err:  ErrTemplateLimit,
			}
		}
	}
	for _, d := range c.Dependencies() {
		if err := scanChart(d, prefix+"charts/"+d.Name()+"/"); err != nil {
			return err
		}
	}
	return nil
}
