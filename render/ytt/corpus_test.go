package ytt

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/internal/refcli"
)

// referenceCLI returns the ytt CLI of the version this module builds
// with: $REGATTA_YTT_CLI, or built from the module proxy in a temporary
// module (refcli; `go install carvel.dev/ytt/cmd/ytt@v` fails: the proxy
// does not list carvel.dev/ytt's versions, which go install reads for
// deprecations).
func referenceCLI(t *testing.T) string {
	v := refcli.ModuleVersion(t, "carvel.dev/ytt")
	return refcli.Path(t, "REGATTA_YTT_CLI", "ytt", v, func(dir, name string) error { return buildCLI(dir, name, v) })
}

// buildCLI builds carvel.dev/ytt/cmd/ytt at version into dir/name.
func buildCLI(dir, name, version string) error {
	mod, err := os.MkdirTemp("", "ytt-cli-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(mod)
	gomod := "module yttcli\n\ngo 1.26\n\nrequire carvel.dev/ytt " + version + "\n"
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	tools := "//go:build tools\n\npackage tools\n\nimport _ \"carvel.dev/ytt/cmd/ytt\"\n"
	if err := os.WriteFile(filepath.Join(mod, "tools.go"), []byte(tools), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-o", filepath.Join(dir, name), "carvel.dev/ytt/cmd/ytt"}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = mod, append(os.Environ(), "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			return errors.New(string(out))
		}
	}
	return nil
}

// request turns ytt CLI flags, run in dir, into a Request; ok is false
// for a flag it does not map.
func request(t *testing.T, dir string, args []string) (Request, bool) {
	var req Request
	fsys := os.DirFS(dir)
	for i := 0; i < len(args); i++ {
		flag, v := args[i], ""
		if k, val, ok := strings.Cut(flag, "="); ok && strings.HasPrefix(flag, "--") {
			flag, v = k, val
		} else if i+1 < len(args) {
			v = args[i+1]
			i++
		}
		switch flag {
		case "-f", "--file":
			req.Groups = append(req.Groups, group(t, fsys, path.Clean(strings.TrimSuffix(v, "/"))))
		case "--data-values-file":
			req.ValuesFiles = append(req.ValuesFiles, group(t, fsys, path.Clean(strings.TrimSuffix(v, "/")))...)
		case "--data-value-yaml":
			req.ValuesYAML = append(req.ValuesYAML, v)
		case "-v", "--data-value":
			req.ValuesStrings = append(req.ValuesStrings, v)
		default:
			return req, false
		}
	}
	return req, true
}

// group reads a -f path as the render package does.
func group(t *testing.T, fsys fs.FS, p string) Group {
	info, err := fs.Stat(fsys, p)
	if err != nil {
		t.Fatal(err)
	}
	if !info.IsDir() {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			t.Fatal(err)
		}
		return Group{{Path: p, Rel: path.Base(p), Data: data}}
	}
	var g Group
	err = fs.WalkDir(fsys, p, func(q string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, q)
		g = append(g, File{Path: q, Rel: strings.TrimPrefix(q, p+"/"), Data: data})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// compare renders with Render and the CLI: "identical" (same text),
// "same-objects" (same objects, other text), "both-fail", or a
// difference.
func compare(t *testing.T, cli, dir string, args []string) string {
	req, ok := request(t, dir, args)
	if !ok {
		return "unsupported flags"
	}
	cmd := exec.Command(cli, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	want, cliErr := cmd.Output()
	got, err := Render(req)
	switch {
	case cliErr != nil && err != nil:
		return "both-fail"
	case cliErr != nil:
		return "only the CLI fails: " + stderr.String()
	case err != nil:
		return "only regatta fails: " + err.Error()
	case got == string(want):
		return "identical"
	case reflect.DeepEqual(docs(t, got), docs(t, string(want))):
		return "same-objects"
	}
	return "different:\n" + got + "\n--- CLI:\n" + string(want)
}

func docs(t *testing.T, text string) []any {
	var out []any
	for _, d := range strings.Split(text, "\n---\n") {
		var v any
		if err := yaml.Unmarshal([]byte(d), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// TestCorpusMatchesCLI renders every case of testdata/corpus (flags in
// its args file) with Render and the ytt CLI and wants the same text.
func TestCorpusMatchesCLI(t *testing.T) {
	cli := referenceCLI(t)
	dirs, _ := filepath.Glob("testdata/corpus/*")
	if len(dirs) == 0 {
		t.Fatal("no corpus")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, "args"))
			if err != nil {
				t.Fatal(err)
			}
			if got := compare(t, cli, dir, strings.Split(strings.TrimRight(string(b), "\n"), "\n")); got != "identical" {
				t.Fatal(got)
			}
		})
	}
}
