package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"
)

// The chart every Helm profile installs.
const (
	ChartName    = "bench-app"
	ChartVersion = "1.0.0"
)

// ChartRepo is a Helm chart repository on loopback serving bench-app.
type ChartRepo struct {
	srv *httptest.Server
	dir string
}

// StartChartRepo packages bench-app into dir and serves it.
func StartChartRepo(dir string) (*ChartRepo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeChartRepo(dir); err != nil {
		return nil, fmt.Errorf("chart repository: %w", err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	return &ChartRepo{srv: srv, dir: dir}, nil
}

// URL is the repository's address.
func (c *ChartRepo) URL() string { return c.srv.URL }

// Close stops the server.
func (c *ChartRepo) Close() { c.srv.Close() }

// benchChart renders the same 30 objects as the plain and Kustomize
// profiles, in the release namespace, with the variant from the values.
func benchChart() *chart.Chart {
	t := objectText{Namespace: "{{ .Release.Namespace }}", Profile: "{{ .Values.profile }}",
		Variant: "{{ .Values.variant }}", Generation: "{{ .Values.generation }}"}
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: ChartName, Version: ChartVersion,
			Description: "regatta benchmark add-on: 30 objects healthy without controllers"},
		Values: map[string]any{"profile": "bench", "variant": "a", "generation": "0"},
		Templates: []*chart.File{
			{Name: "templates/namespace.yaml", Data: []byte(namespaceYAML(t))},
			{Name: "templates/objects.yaml", Data: []byte(objectsYAML(t))},
		},
	}
}

type indexEntry struct {
	APIVersion string   `json:"apiVersion"`
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	URLs       []string `json:"urls"`
	Digest     string   `json:"digest"`
}

func writeChartRepo(dir string) error {
	p, err := chartutil.Save(benchChart(), dir)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	e := indexEntry{APIVersion: chart.APIVersionV2, Name: ChartName, Version: ChartVersion,
		URLs: []string{filepath.Base(p)}, Digest: hex.EncodeToString(sum[:])}
	index, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "entries": map[string][]indexEntry{ChartName: {e}}})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "index.yaml"), index, 0o644)
}
