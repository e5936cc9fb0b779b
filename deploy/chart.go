// Package deploy holds regatta's Helm chart (charts/regatta) and the plain
// manifests rendered from it (regatta.yaml, regatta-sharded.yaml, written
// by `make manifests`), so that the chart is their one source. Its tests
// check that the manifests match the chart and apply both to real API
// servers.
package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing/fstest"

	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/render/helm"
)

// Namespace and Release are the namespace and release name of the plain
// manifests.
const (
	Namespace = "regatta-system"
	Release   = "regatta"
)

// Manifest is a plain manifest file and the chart values it is rendered
// with.
type Manifest struct {
	File   string // e.g. regatta.yaml
	Values string // e.g. values/regatta.yaml, relative to the deploy folder
	About  string // the file's first comment lines
}

// Manifests are the plain manifests of the deploy folder.
var Manifests = []Manifest{
	{
		File:   "regatta.yaml",
		Values: "values/regatta.yaml",
		About:  "two replicas with leader election (one leads, one stands by)",
	},
	{
		File:   "regatta-sharded.yaml",
		Values: "values/regatta-sharded.yaml",
		About:  "three replicas sharing the fleet (--replicas-mode shard), a StatefulSet",
	},
}

// Chart is a chart folder read into memory, optionally restamped with
// another version.
type Chart struct {
	FS   fs.FS
	Meta chart.Metadata
}

// LoadChart reads the chart folder dir. A non-empty version (vX.Y.Z)
// replaces the chart's version (X.Y.Z) and appVersion (vX.Y.Z), as a
// release stamps it.
func LoadChart(dir, version string) (*Chart, error) {
	files := fstest.MapFS{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[path.Join("regatta", filepath.ToSlash(rel))] = &fstest.MapFile{Data: data, Mode: 0o644}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := &Chart{FS: files}
	meta, ok := files["regatta/Chart.yaml"]
	if !ok {
		return nil, fmt.Errorf("%s: no Chart.yaml", dir)
	}
	if err := yaml.Unmarshal(meta.Data, &c.Meta); err != nil {
		return nil, fmt.Errorf("%s/Chart.yaml: %w", dir, err)
	}
	if version != "" {
		if err := c.stamp(version); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// stamp sets the chart's version and appVersion, keeping Chart.yaml's
// other lines (and comments) as they are.
func (c *Chart) stamp(version string) error {
	if len(version) < 2 || version[0] != 'v' {
		return fmt.Errorf("version %q: want vX.Y.Z", version)
	}
	f := c.FS.(fstest.MapFS)["regatta/Chart.yaml"]
	var out [][]byte
	for _, line := range bytes.Split(f.Data, []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte("version:")):
			line = []byte("version: " + version[1:])
		case bytes.HasPrefix(line, []byte("appVersion:")):
			line = []byte(fmt.Sprintf("appVersion: %q", version))
		}
		out = append(out, line)
	}
	f.Data = bytes.Join(out, []byte("\n"))
	c.Meta.Version, c.Meta.AppVersion = version[1:], version
	return nil
}

// Render renders the chart as release Release in namespace ns with
// values, with regatta's Helm renderer, and returns its objects in Helm's
// install order.
func (c *Chart) Render(ctx context.Context, ns string, values map[string]any) ([]*unstructured.Unstructured, error) {
	r := helm.New(helm.Options{CacheDir: os.TempDir()})
	defer r.Close()
	res, err := r.Render(ctx, helm.Request{
		ChartFS:          c.FS,
		ChartPath:        "regatta",
		ReleaseName:      Release,
		ReleaseNamespace: ns,
		Values:           values,
		// The templates read no capabilities; a version the chart's
		// kubeVersion accepts (Helm's default is v1.20).
		KubeVersion: "v1.37.2",
	})
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, s := range res.Steps {
		objs = append(objs, s.Objects...)
	}
	return objs, nil
}

// ReadValues reads a values file.
func ReadValues(file string) (map[string]any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	values := map[string]any{}
	if err := yaml.Unmarshal(data, &values); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return values, nil
}

// RenderManifest renders one plain manifest: a Namespace labelled for
// the restricted Pod Security Standard, then the chart's objects.
func (c *Chart) RenderManifest(ctx context.Context, deployDir string, m Manifest) ([]byte, error) {
	values, err := ReadValues(filepath.Join(deployDir, m.Values))
	if err != nil {
		return nil, err
	}
	objs, err := c.Render(ctx, Namespace, values)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Values, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# regatta %s in a management cluster: %s.\n", c.Meta.AppVersion, m.About)
	fmt.Fprintf(&b, "# Rendered from deploy/charts/regatta with deploy/%s by `make manifests`:\n", m.Values)
	b.WriteString("# edit the chart or the values, not this file. Apply with\n")
	fmt.Fprintf(&b, "#   kubectl apply --server-side -f %s\n", m.File)
	b.WriteString("# after editing the repository URL, then create the Secret it mounts\n")
	b.WriteString("# (README.md, \"Install\").\n")
	objs = append([]*unstructured.Unstructured{namespace()}, objs...)
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		b.Write(data)
	}
	return b.Bytes(), nil
}

func namespace() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata": map[string]any{
			"name": Namespace,
			"labels": map[string]any{
				"pod-security.kubernetes.io/enforce": "restricted",
			},
		},
	}}
}
