package helm

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/spec"
)

// chartFolder copies testdata/charts/<name> into m under dir.
func chartFolder(t *testing.T, m fstest.MapFS, name, dir string) {
	t.Helper()
	root := filepath.Join("testdata", "charts", name)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		m[path.Join(dir, filepath.ToSlash(rel))] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestChartFolderWithRepositoryDependency(t *testing.T) {
	srv := newRepoServer(t)
	m := fstest.MapFS{}
	chartFolder(t, m, "fleet-app", "addons/app")
	chartYAML := strings.Replace(string(m["addons/app/Chart.yaml"].Data), "https://charts.example.invalid/stable", srv.URL, 1)
	m["addons/app/Chart.yaml"] = &fstest.MapFile{Data: []byte(chartYAML)}
	m["addons/app/scratch/ignored.yaml"] = &fstest.MapFile{Data: []byte("not: a chart file")}
	req := appRequest("")
	req.ChartFS, req.ChartPath, req.ChartName, req.ChartVersion = m, "addons/app", "", ""
	res, err := newTestRenderer(t).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.ChartVersion != "1.2.0" || !strings.HasPrefix(res.ChartDigest, "sha256:") {
		t.Errorf("version %s digest %s", res.ChartVersion, res.ChartDigest)
	}
	if find(all(res.Steps), "ConfigMap", "shop-cache") == nil {
		t.Error("dependency not fetched from the repository")
	}
	golden(t, "fleet-app.yaml", dumpSteps(t, res.Steps)) // same output as the packaged chart

	// .helmignore'd files do not change the digest; chart files do.
	_, d1, _ := newTestRenderer(t).Resolve(context.Background(), req)
	m["addons/app/README.md"] = &fstest.MapFile{Data: []byte("changed")}
	_, d2, _ := newTestRenderer(t).Resolve(context.Background(), req)
	m["addons/app/values.yaml"] = &fstest.MapFile{Data: []byte("replicaCount: 2\nimage: {repository: x, tag: y}\n")}
	_, d3, _ := newTestRenderer(t).Resolve(context.Background(), req)
	if d1 != d2 || d2 == d3 {
		t.Errorf("digests %s %s %s", d1, d2, d3)
	}
}

func TestChartFolderFileDependency(t *testing.T) {
	m := fstest.MapFS{}
	chartFolder(t, m, "fleet-app", "addons/app")
	chartFolder(t, m, "cache", "addons/cache")
	chartYAML := strings.Replace(string(m["addons/app/Chart.yaml"].Data), "https://charts.example.invalid/stable", "file://../cache", 1)
	m["addons/app/Chart.yaml"] = &fstest.MapFile{Data: []byte(chartYAML)}
	req := appRequest("")
	req.ChartFS, req.ChartPath = m, "addons/app"
	res, err := newTestRenderer(t).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if find(all(res.Steps), "ConfigMap", "shop-cache") == nil {
		t.Error("file:// dependency missing")
	}
	m["addons/app/Chart.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(chartYAML, "file://../cache", "file://../../../etc", 1))}
	_, err = newTestRenderer(t).Render(context.Background(), req)
	want := "chart fleet-app 1.2.0: dependency cache 0.3.x: file://../../../etc: outside the repository"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestChartFolderSymlinks: a chart file that is a symlink is read when it
// names a file of the same chart; a link out of the chart folder (or to a
// folder) is an error naming the link, never skipped in silence.
func TestChartFolderSymlinks(t *testing.T) {
	link := func(target string) *fstest.MapFile {
		return &fstest.MapFile{Mode: fs.ModeSymlink, Data: []byte(target)}
	}
	for name, tc := range map[string]struct {
		link *fstest.MapFile
		want string // "" renders the linked ConfigMap
	}{
		"inside":          {link("../files/cm.yaml"), ""},
		"outside":         {link("../../../platform/cm.yaml"), "symlink addons/app/templates/linked.yaml points to platform/cm.yaml, outside the chart folder addons/app"},
		"out of the repo": {link("../../../../etc/passwd"), "symlink addons/app/templates/linked.yaml: "},
		"a folder":        {link("../files"), "symlink addons/app/templates/linked.yaml points to addons/app/files, which is not a file"},
	} {
		t.Run(name, func(t *testing.T) {
			m := fstest.MapFS{}
			chartFolder(t, m, "cache", "addons/app")
			cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: linked}\n"
			m["addons/app/files/cm.yaml"] = &fstest.MapFile{Data: []byte(cm)}
			m["platform/cm.yaml"] = &fstest.MapFile{Data: []byte(cm)}
			m["addons/app/templates/linked.yaml"] = tc.link
			req := Request{ChartFS: m, ChartPath: "addons/app", ReleaseName: "app", ReleaseNamespace: "ns"}
			res, err := newTestRenderer(t).Render(context.Background(), req)
			if tc.want == "" {
				if err != nil || find(all(res.Steps), "ConfigMap", "linked") == nil {
					t.Fatalf("linked file not rendered: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, spec.ErrPathEscapes) && name != "a folder" {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
