package helm

import (
	"fmt"
	"io/fs"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// ScanChartFolder checks a chart folder the way a render checks it before
// Helm runs, without values or cluster facts: it reads and loads the chart
// and returns the first literal template bomb of the chart or its
// in-folder subcharts as a *TemplateError (file relative to dir), or a
// loading error. Bombs whose sizes come from values are found only when
// the chart renders (see WorkerOptions).
func ScanChartFolder(fsys fs.FS, dir string) error {
	files, err := readChartFS(fsys, dir)
	if err != nil {
		return err
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return fmt.Errorf("loading chart folder %s: %w", dir, err)
	}
	return scanChart(c, "")
}
