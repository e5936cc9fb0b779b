package repo

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
)

// fleetTree stores a tree of n cluster records under status/clusters and a
// README, and returns the store and the tree.
func fleetTree(t testing.TB, n int) (*memory.Storage, plumbing.Hash) {
	st := memory.NewStorage()
	edits := map[string]edit{}
	add := func(p, content string) {
		h, err := writeBlob(st, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		edits[p] = edit{blob: h}
	}
	add("status/README.md", "# fleet\n")
	for i := range n {
		add(fmt.Sprintf("status/clusters/c%05d.yaml", i), fmt.Sprintf("name: c%05d\ngeneration: 1\n", i))
	}
	root, err := applyEdits(st, plumbing.ZeroHash, edits)
	if err != nil {
		t.Fatal(err)
	}
	return st, root
}

// TestReadParent: a file is read from its folder, each folder decoded
// once; a missing file, a missing folder, a folder read as a file and a
// path under a file are not found, without error; the empty tree has
// nothing.
func TestReadParent(t *testing.T) {
	st, root := fleetTree(t, 3)
	r := newTree(st, "", root, time.Time{})
	for p, want := range map[string]string{
		"status/clusters/c00001.yaml": "name: c00001\ngeneration: 1\n",
		"status/README.md":            "# fleet\n",
		"status/clusters/c00009.yaml": "",
		"status/other/x.yaml":         "",
		"status/clusters":             "",
		"status/README.md/x":          "",
		"top.yaml":                    "",
	} {
		got, found, err := readParent(r, p)
		if err != nil || found != (want != "") || string(got) != want {
			t.Errorf("%s: %q found=%v err=%v, want %q", p, got, found, err, want)
		}
	}
	decoded := 0
	r.dirs.Range(func(any, any) bool { decoded++; return true })
	if decoded != 3 { // the root, status, status/clusters
		t.Errorf("decoded folders %d, want 3 (each once)", decoded)
	}
	if _, found, err := readParent(newTree(st, "", plumbing.ZeroHash, time.Time{}), "status/README.md"); found || err != nil {
		t.Errorf("the empty tree: found=%v err=%v", found, err)
	}
}

// BenchmarkStatusTreeParents reads every record of a 2,000-cluster status
// tree, as a status commit's Rewrite does (each folder decoded once; it
// was once per file).
func BenchmarkStatusTreeParents(b *testing.B) {
	const n = 2000
	st, root := fleetTree(b, n)
	for b.Loop() {
		r := newTree(st, "", root, time.Time{})
		for i := range n {
			if _, found, err := readParent(r, fmt.Sprintf("status/clusters/c%05d.yaml", i)); !found || err != nil {
				b.Fatal(found, err)
			}
		}
	}
}
