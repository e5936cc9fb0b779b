// Command gen packages the test charts of render/helm/testdata/charts into
// a chart repository (testdata/repo: archives and index.yaml).
//
//	go run ./render/helm/testdata/gen
//
// fleet-app is published as 1.1.0, 1.2.0 and 1.3.0-rc.1 with the cache
// chart vendored into its charts/ folder.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"log"
	"os"
	"path/filepath"
	"sort"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"
)

const dir = "render/helm/testdata"

type entry struct {
	APIVersion string   `json:"apiVersion"`
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	URLs       []string `json:"urls"`
	Digest     string   `json:"digest"`
}

func main() {
	out := filepath.Join(dir, "repo")
	check(os.RemoveAll(out))
	check(os.MkdirAll(out, 0o755))
	index := map[string][]entry{}
	publish := func(c *chart.Chart) {
		index[c.Name()] = append(index[c.Name()], save(c, out))
	}
	publish(load("cache"))
	publish(load("broken"))
	for _, v := range []string{"1.1.0", "1.2.0", "1.3.0-rc.1"} {
		app := load("fleet-app")
		app.AddDependency(load("cache"))
		app.Metadata.Version = v
		publish(app)
	}
	for _, es := range index {
		sort.Slice(es, func(i, j int) bool { return es[i].Version > es[j].Version })
	}
	data, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "entries": index})
	check(err)
	check(os.WriteFile(filepath.Join(out, "index.yaml"), data, 0o644))
	log.Printf("wrote %s", out)
}

func load(name string) *chart.Chart {
	c, err := loader.LoadDir(filepath.Join(dir, "charts", name))
	check(err)
	return c
}

func save(c *chart.Chart, out string) entry {
	p, err := chartutil.Save(c, out)
	check(err)
	data, err := os.ReadFile(p)
	check(err)
	sum := sha256.Sum256(data)
	return entry{APIVersion: "v2", Name: c.Name(), Version: c.Metadata.Version,
		URLs: []string{filepath.Base(p)}, Digest: hex.EncodeToString(sum[:])}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
