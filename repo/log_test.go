package repo

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FirstParents walks a branch with a merge down its first parents, newest
// first, bounded by n and stopped before until; a fold's root ends it.
func TestFirstParents(t *testing.T) {
	up := newUpstream(t, t.TempDir(), "fleet.git")
	root := runGit(t, up.work, "rev-parse", "HEAD")
	up.write("a", "1\n")
	c1 := up.commit("one")
	runGit(t, up.work, "checkout", "-q", "-b", "side", root)
	up.write("b", "side\n")
	side := up.commit("side")
	runGit(t, up.work, "checkout", "-q", "main")
	runGit(t, up.work, "merge", "-q", "--no-ff", "-m", "merge", "side")
	runGit(t, up.work, "push", "-q", "origin", "HEAD:main")
	merge := runGit(t, up.work, "rev-parse", "HEAD")
	up.write("a", "2\n")
	c3 := up.commit("three")
	r, err := Open(up.work)
	if err != nil {
		t.Fatal(err)
	}
	shas := func(cs []Commit) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.SHA)
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		until string
		n     int
		want  []string
	}{
		{"all", "", 0, []string{c3, merge, c1, root}},
		{"n", "", 2, []string{c3, merge}},
		{"until", c1, 0, []string{c3, merge}},
		{"until and n", c1, 1, []string{c3}},
	} {
		got, err := r.FirstParents(t.Context(), "main", tt.until, tt.n)
		if err != nil || !slices.Equal(shas(got), tt.want) {
			t.Errorf("%s: FirstParents = %v, %v; want %v (side %s)", tt.name, shas(got), err, tt.want, side)
		}
	}
	got, err := r.FirstParents(t.Context(), "main", "", 1)
	if err != nil || got[0].Message != "three\n" || got[0].Time.IsZero() || len(got[0].Parents) != 1 {
		t.Errorf("FirstParents head = %+v, %v", got, err)
	}
	if _, err := r.FirstParents(t.Context(), "nope", "", 0); err == nil {
		t.Error("FirstParents of a missing branch: no error")
	}
}

// ChangedFiles lists what a commit added, changed and removed under a
// folder, a folder replaced by a file included (and the files beside
// folders that Git orders between a name and its folder), with hashes
// Blob reads;
// from "" it lists every file.
func TestChangedFiles(t *testing.T) {
	up := newUpstream(t, t.TempDir(), "fleet.git")
	up.write("status/clusters/a.yaml", "a1\n")
	up.write("status/clusters/b.yaml", "b1\n")
	up.write("status/x/y", "folder\n")
	up.write("status/x.y", "Git orders it before the folder x, after a file x\n")
	up.write("status/d/f", "a folder that stays\n")
	up.write("status/d.e", "a file Git orders before it, removed\n")
	up.write("other/z", "outside\n")
	first := up.commit("first")
	up.write("status/clusters/a.yaml", "a2\n")
	up.write("status/clusters/c.yaml", "c1\n")
	if err := os.Remove(filepath.Join(up.work, "status/clusters/b.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(up.work, "status/d.e")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(up.work, "status/x")); err != nil {
		t.Fatal(err)
	}
	up.write("status/x", "file now\n")
	up.write("other/z", "changed outside\n")
	second := up.commit("second")
	r, err := Open(up.work)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	changes, err := r.ChangedFiles(ctx, first, second, "status")
	if err != nil {
		t.Fatal(err)
	}
	type change struct {
		path     string
		old, new string // contents, "" for absent
	}
	read := func(h string) string {
		if h == "" {
			return ""
		}
		b, err := r.Blob(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var got []change
	for _, c := range changes {
		got = append(got, change{c.Path, read(c.Old), read(c.New)})
	}
	want := []change{
		{"status/clusters/a.yaml", "a1\n", "a2\n"},
		{"status/clusters/b.yaml", "b1\n", ""},
		{"status/clusters/c.yaml", "", "c1\n"},
		{"status/d.e", "a file Git orders before it, removed\n", ""},
		{"status/x", "", "file now\n"},
		{"status/x/y", "folder\n", ""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("ChangedFiles = %q\nwant %q", got, want)
	}
	all, err := r.ChangedFiles(ctx, "", first, ".")
	if err != nil || len(all) != 8 || all[0].Path != "README.md" || all[0].Old != "" {
		t.Errorf("ChangedFiles from nothing = %+v, %v", all, err)
	}
	none, err := r.ChangedFiles(ctx, second, second, "status")
	if err != nil || len(none) != 0 {
		t.Errorf("ChangedFiles of a commit with itself = %+v, %v", none, err)
	}
	if _, err := r.Blob(ctx, "0123456789012345678901234567890123456789"); err == nil {
		t.Error("Blob of a missing object: no error")
	}
}
