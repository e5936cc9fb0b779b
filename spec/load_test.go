package spec

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func loadDir(t testing.TB, dir string) (*Repository, Diagnostics) {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return Load(root.FS())
}

func formatDiags(ds Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		if d.Severity == SeverityWarning {
			b.WriteString("warning: ")
		}
		b.WriteString(d.Error())
		b.WriteByte('\n')
	}
	return b.String()
}

// TestGolden loads every repository under testdata/ and compares all its
// findings with testdata/<name>.golden. Valid repositories must have no
// errors; invalid ones must have at least one.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*-*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if strings.HasSuffix(dir, ".golden") {
			continue
		}
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			_, diags := loadDir(t, dir)
			got := formatDiags(diags)
			golden := dir + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./spec -update)", err)
			}
			if got != string(want) {
				t.Errorf("findings differ from %s:\n--- got\n%s--- want\n%s", golden, got, want)
			}
			valid := strings.HasPrefix(name, "valid-")
			if hasErr := diags.Err() != nil; hasErr == valid {
				t.Errorf("valid=%v but errors=%v", valid, hasErr)
			}
		})
	}
}

// TestApprovalRevisionDigits: an approval's revision written as unquoted
// digits (a commit prefix can be all digits) is taken as the text it is.
func TestApprovalRevisionDigits(t *testing.T) {
	repo, diags := loadDir(t, "testdata/valid-rollout")
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	c := repo.RolloutControl("web")
	if !c.Approved("production", "0588502862991"+strings.Repeat("a", 27)) {
		t.Errorf("approvals %+v do not approve the all-digit commit 0588502862991…", c.Spec.Approvals)
	}
}
