package reconciler

import (
	"io/fs"

	"github.com/regatta-dev/regatta/spec"
)

// revision is a loaded, valid revision of the fleet repository.
type revision struct {
	sha  string
	tree fs.FS
	repo *spec.Repository
}

// sameTree reports whether a path is the same Git object (or absent) in
// two trees; false when the trees cannot say.
func sameTree(a, b fs.FS, name string) bool {
	ha, okA := treeHash(a, name)
	hb, okB := treeHash(b, name)
	return okA && okB && ha == hb
}

func treeHash(tree fs.FS, name string) (string, bool) {
	th := treeHasher(tree)
	if th == nil {
		return "", false
	}
	h, err := th(name)
	if err != nil {
		if _, statErr := fs.Stat(tree, name); statErr != nil {
			return "", true // absent in this tree
		}
		return "", false
	}
	return h, true
}

// treeHasher uses Git tree hashes when the tree is a Git tree.
func treeHasher(tree fs.FS) func(string) (string, error) {
	if th, ok := tree.(interface{ TreeHash(string) (string, error) }); ok {
		return th.TreeHash
	}
	return nil
}
