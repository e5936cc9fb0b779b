package bench

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// Binaries are the programs the suite runs, copied to a tmpfs folder.
//
// This machine pages out cold page-cache pages proactively (DAMON), so a
// binary run once per command (kubectl in the scripts) or one whose code
// goes cold (an idle API server) is read back from disk again and again —
// a cost a usual workstation does not have. tmpfs pages stay in memory,
// which puts every method on the footing of a normal page cache.
type Binaries struct {
	Dir     string
	Kubectl string
	Regatta string
	Etcd    string
}

// StageBinaries copies kubectl, regatta, the v1.37 kube-apiservers of
// binDir and etcd (binDir's, else PATH's) into a tmpfs folder.
func StageBinaries(binDir string) (*Binaries, error) {
	root := "/dev/shm"
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		root = os.TempDir()
	}
	dir, err := os.MkdirTemp(root, "regatta-bench-bin-")
	if err != nil {
		return nil, err
	}
	b := &Binaries{Dir: dir, Kubectl: filepath.Join(dir, "kubectl"), Regatta: filepath.Join(dir, "regatta"),
		Etcd: filepath.Join(dir, "etcd")}
	if err := checkStatic(filepath.Join(binDir, "regatta")); err != nil {
		return nil, err
	}
	apiservers, _ := filepath.Glob(filepath.Join(binDir, "kube-apiserver-v1.37.*"))
	srcs := append([]string{filepath.Join(binDir, "kubectl"), filepath.Join(binDir, "regatta")}, apiservers...)
	for _, src := range srcs {
		if err := copyFile(src, filepath.Join(dir, filepath.Base(src))); err != nil {
			b.Remove()
			return nil, err
		}
	}
	etcd := filepath.Join(binDir, "etcd")
	if _, err := os.Stat(etcd); err != nil {
		if etcd, err = exec.LookPath("etcd"); err != nil {
			b.Remove()
			return nil, fmt.Errorf("etcd: %w (run make test-env)", err)
		}
	}
	if err := copyFile(etcd, b.Etcd); err != nil {
		b.Remove()
		return nil, err
	}
	return b, nil
}

// errDynamic is checkStatic's error for a binary that needs a dynamic
// loader: one built with cgo, not by make build.
var errDynamic = errors.New("is dynamically linked (built with cgo); the suite measures make build's static binary: run make build")

// checkStatic refuses a regatta binary that is not the static one make
// build makes. A cgo build keeps kustomize's plugin symbols: 28 MB more
// loaded text and about 13 MiB more resident memory, which the daemon
// phase would count against regatta.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w (run make build)", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s %w", path, errDynamic)
		}
	}
	return nil
}

// StageControlPlane copies kube-controller-manager, kube-scheduler (with a
// version suffix or without) and kwok of binDir beside the other binaries,
// for clusters with controllers (the health phase).
func (b *Binaries) StageControlPlane(binDir string) error {
	for _, name := range []string{"kube-controller-manager", "kube-scheduler", "kwok"} {
		srcs, _ := filepath.Glob(filepath.Join(binDir, name+"*"))
		if len(srcs) == 0 {
			return fmt.Errorf("%s: no %s (run make test-env)", binDir, name)
		}
		for _, src := range srcs {
			if err := copyFile(src, filepath.Join(b.Dir, filepath.Base(src))); err != nil {
				return err
			}
		}
	}
	return nil
}

// Remove deletes the copies.
func (b *Binaries) Remove() { os.RemoveAll(b.Dir) }

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("%w (run make build test-env)", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
