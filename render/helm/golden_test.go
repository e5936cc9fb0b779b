package helm

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

// dumpSteps writes steps as YAML documents headed by their phase and weight.
func dumpSteps(t *testing.T, steps []Step) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, s := range steps {
		for _, o := range s.Objects {
			data, err := yaml.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "# step %s weight %d\n---\n%s", s.Phase, s.Weight, data)
		}
	}
	return b.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update to accept):\n%s", name, got)
	}
}
