package jsonnet

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/refcli"
)

// fsReader reads files of a folder; it has no cluster data.
type fsReader struct{ fsys fs.FS }

func (r fsReader) ReadFile(p string) ([]byte, error) { return fs.ReadFile(r.fsys, p) }

func (r fsReader) Data(name string) ([]byte, error) {
	return nil, errors.New("no data in this test")
}

// referenceCLI returns the jsonnet CLI of the go-jsonnet version this
// module builds with: $REGATTA_JSONNET_CLI, or built from the module proxy
// (refcli).
func referenceCLI(t *testing.T) string {
	v := refcli.ModuleVersion(t, "github.com/google/go-jsonnet")
	return refcli.Path(t, "REGATTA_JSONNET_CLI", "jsonnet", v, refcli.GoInstall("github.com/google/go-jsonnet/cmd/jsonnet", v))
}

// corpusCase is one folder of testdata/corpus: its main file and the CLI
// flags of its args file.
type corpusCase struct {
	dir  string
	main string
	args []string
}

func loadCase(t *testing.T, dir string) corpusCase {
	c := corpusCase{dir: dir, main: "main.jsonnet"}
	if b, err := os.ReadFile(filepath.Join(dir, "mainfile")); err == nil {
		c.main = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "args")); err == nil {
		c.args = strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	}
	return c
}

// request turns the CLI flags into a Request.
func (c corpusCase) request(t *testing.T) Request {
	req := Request{Main: c.main}
	set := func(m *map[string]string, kv string) {
		k, v, _ := strings.Cut(kv, "=")
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[k] = v
	}
	for i := 0; i < len(c.args); i += 2 {
		v := c.args[i+1]
		switch c.args[i] {
		case "-J":
			req.JPath = append(req.JPath, v)
		case "--ext-str":
			set(&req.ExtVars, v)
		case "--ext-code":
			set(&req.ExtCode, v)
		case "--tla-str":
			set(&req.TLAVars, v)
		case "--tla-code":
			set(&req.TLACode, v)
		default:
			t.Fatalf("%s: unknown flag %s", c.dir, c.args[i])
		}
	}
	return req
}

// TestCorpusMatchesCLI evaluates every corpus case with Evaluate and with
// the jsonnet CLI of the same version and compares the output text and,
// object for object, the manifests read from it.
func TestCorpusMatchesCLI(t *testing.T) {
	cli := referenceCLI(t)
	dirs, err := filepath.Glob("testdata/corpus/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	identical := 0
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			c := loadCase(t, dir)
			cmd := exec.Command(cli, append(c.args, c.main)...)
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			want, err := cmd.Output()
			if err != nil {
				t.Fatalf("jsonnet CLI: %v: %s", err, stderr.String())
			}
			got, err := Evaluate(c.request(t), fsReader{os.DirFS(dir)})
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if got != strings.TrimSuffix(string(want), "\n") {
				t.Fatalf("output differs from the CLI's\ngot:  %s\nwant: %s", got, want)
			}
			gm, err := Manifests(got)
			if err != nil {
				t.Fatal(err)
			}
			wm, err := Manifests(string(want))
			if err != nil {
				t.Fatal(err)
			}
			if len(gm) == 0 || !reflect.DeepEqual(gm, wm) {
				t.Fatalf("manifests differ (%d vs %d)", len(gm), len(wm))
			}
			identical++
		})
	}
	t.Logf("corpus: %d of %d cases identical to the jsonnet CLI", identical, len(dirs))
}
