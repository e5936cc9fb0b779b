//go:build corpus

package render

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/refcli"
	"github.com/regatta-dev/regatta/render/jsonnet"
	"github.com/regatta-dev/regatta/spec"
)

// TestKubePrometheusExamples renders kube-prometheus's examples (a
// checkout in $REGATTA_KUBE_PROMETHEUS with its vendor/ folder laid out
// by `jb install`) as Jsonnet add-ons of a regatta repository, and with
// the jsonnet CLI of the same go-jsonnet version (`jsonnet -J vendor
// <example>`, as kube-prometheus's build.sh runs it), and compares them
// object for object (docs/testing.md).
//
//	REGATTA_KUBE_PROMETHEUS=/tmp/kube-prometheus go test -tags corpus -run TestKubePrometheusExamples -v ./render/
func TestKubePrometheusExamples(t *testing.T) {
	src := os.Getenv("REGATTA_KUBE_PROMETHEUS")
	if src == "" {
		t.Fatal("set REGATTA_KUBE_PROMETHEUS to a kube-prometheus checkout with vendor/ (jb install)")
	}
	v := refcli.ModuleVersion(t, "github.com/google/go-jsonnet")
	cli := refcli.Path(t, "REGATTA_JSONNET_CLI", "jsonnet", v, refcli.GoInstall("github.com/google/go-jsonnet/cmd/jsonnet", v))
	dir := t.TempDir()
	copyCheckout(t, src, dir)
	examples := kubePrometheusExamples(t, dir)
	writeProfile(t, dir, examples)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	repo, diags := spec.Load(root.FS())
	r := New(Options{})
	counts := map[string]int{}
	objects, ran := 0, 0
	for i, ex := range examples {
		t.Run(strings.ReplaceAll(ex, "/", "_"), func(t *testing.T) {
			p := repo.Profile(fmt.Sprintf("kp%d", i))
			if p == nil {
				t.Fatalf("profile not loaded: %v", diags)
			}
			start := time.Now()
			res, rerr := r.Render(context.Background(), Request{FS: root.FS(), Revision: "r", Profile: p, Cluster: prodCluster()})
			want, cerr := cliObjects(cli, dir, ex)
			kind := compareKubePrometheus(res, rerr, want, cerr)
			ran++
			counts[kind]++
			if kind == "identical" {
				objects += len(want)
			}
			t.Logf("%s (%s)", kind, time.Since(start).Round(time.Millisecond))
			if kind != "identical" && kind != "both fail" {
				t.Error(kind)
			}
			if kind == "both fail" {
				t.Logf("regatta: %v\nCLI: %v", rerr, cerr)
			}
		})
	}
	t.Logf("examples %d, objects of identical examples %d, outcomes %v", ran, objects, counts)
}

// kubePrometheusExamples lists example.jsonnet and examples/**/*.jsonnet.
func kubePrometheusExamples(t *testing.T, dir string) []string {
	out := []string{"example.jsonnet"}
	err := filepath.WalkDir(filepath.Join(dir, "examples"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonnet") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeProfile writes one profile per example, each a Jsonnet add-on
// with vendor/ as its library folder.
func writeProfile(t *testing.T, dir string, examples []string) {
	must(t, os.MkdirAll(filepath.Join(dir, "profiles"), 0o755))
	for i, ex := range examples {
		y := fmt.Sprintf("apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: kp%d}\nspec:\n  clusterRefs: [prod-eu-1]\n"+
			"  addons:\n  - name: kp\n    jsonnet: {path: %s, jpath: [vendor]}\n", i, ex)
		must(t, os.WriteFile(filepath.Join(dir, "profiles", fmt.Sprintf("kp%d.yaml", i)), []byte(y), 0o644))
	}
}

// copyCheckout copies src to dst, symlinks as symlinks.
func copyCheckout(t *testing.T, src, dst string) {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.IsDir():
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// cliObjects runs the CLI on an example and reads its output as
// manifests, Lists expanded.
func cliObjects(cli, dir, ex string) ([]map[string]any, error) {
	cmd := exec.Command(cli, "-J", "vendor", ex)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	ms, err := jsonnet.Manifests(string(out))
	if err != nil {
		return nil, err
	}
	var objs []map[string]any
	for _, m := range ms {
		if items, ok := m.Object["items"].([]any); ok && strings.HasSuffix(fmt.Sprint(m.Object["kind"]), "List") {
			for _, it := range items {
				objs = append(objs, it.(map[string]any))
			}
			continue
		}
		objs = append(objs, m.Object)
	}
	return objs, nil
}

// compareKubePrometheus names the outcome of one example.
func compareKubePrometheus(res *Result, rerr error, want []map[string]any, cerr error) string {
	switch {
	case rerr != nil && cerr != nil:
		return "both fail"
	case rerr != nil:
		return "regatta fails: " + firstLine(rerr.Error())
	case cerr != nil:
		return "CLI fails: " + firstLine(cerr.Error())
	}
	got := map[string][]map[string]any{}
	for _, o := range res.Objects() {
		got[objectID(o.Object)] = append(got[objectID(o.Object)], o.Object)
	}
	wantByID := map[string][]map[string]any{}
	for _, w := range want {
		wantByID[objectID(w)] = append(wantByID[objectID(w)], w)
	}
	if n := len(res.Objects()); n != len(want) {
		return fmt.Sprintf("different: %d objects, CLI %d", n, len(want))
	}
	for id, ws := range wantByID {
		if !reflect.DeepEqual(got[id], ws) {
			return fmt.Sprintf("different: %s (%d objects, CLI %d)", id, len(got[id]), len(ws))
		}
	}
	return "identical"
}

func objectID(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	return fmt.Sprintf("%v/%v %v/%v", o["apiVersion"], o["kind"], md["namespace"], md["name"])
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
