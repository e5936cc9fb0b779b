package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// modulePath is the module whose root holds the default bin folder.
const modulePath = "github.com/regatta-dev/regatta"

// MissingError reports a binary that the environment needs but cannot find.
type MissingError struct {
	What   string   // e.g. "kube-apiserver v1.36"
	Looked []string // where it was looked for
	Hint   string   // how to build it, when more than the setup script is needed
}

func (e *MissingError) Error() string {
	hint := setupHint()
	if e.Hint != "" {
		hint = e.Hint + "; " + hint
	}
	return fmt.Sprintf("%s not found (looked in %s); %s",
		e.What, strings.Join(e.Looked, ", "), hint)
}

// setupHint tells how to get the binaries.
func setupHint() string {
	hint := "run `make test` or hack/setup-test-env.sh to install etcd and build " +
		"kube-apiserver, kubectl, kube-controller-manager, kube-scheduler and kwok into bin/, or set " + EnvBinDir + " to a folder that has them"
	if os.Getenv("CI") != "" {
		hint = "CI is set, so tests that need real API servers fail without them: " + hint
	}
	return hint
}

// binaries locates the executables of an environment.
type binaries struct {
	dir  string // holds kube-apiserver-vX.Y.Z
	etcd string
}

func findBinaries(o Options) (binaries, error) {
	dir, err := binDir(o.BinDir)
	if err != nil {
		return binaries{}, err
	}
	etcd, err := etcdBinary(o.EtcdBinary, dir)
	if err != nil {
		return binaries{}, err
	}
	return binaries{dir: dir, etcd: etcd}, nil
}

func binDir(explicit string) (string, error) {
	if explicit == "" {
		explicit = os.Getenv(EnvBinDir)
	}
	if explicit != "" {
		return filepath.Abs(explicit)
	}
	root, err := moduleRoot()
	if err != nil {
		return "", fmt.Errorf("find the bin folder: %w (set %s)", err, EnvBinDir)
	}
	return filepath.Join(root, "bin"), nil
}

// moduleRoot walks up from the working directory (a test's package folder)
// to the folder whose go.mod declares modulePath.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if declaresModule(filepath.Join(dir, "go.mod"), modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s above the working directory", modulePath)
		}
		dir = parent
	}
}

func declaresModule(goMod, module string) bool {
	data, err := os.ReadFile(goMod)
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == module
		}
	}
	return false
}

func etcdBinary(explicit, binDir string) (string, error) {
	if explicit == "" {
		explicit = os.Getenv(EnvEtcd)
	}
	if explicit != "" {
		if isExecutable(explicit) {
			return explicit, nil
		}
		return "", &MissingError{What: "etcd", Looked: []string{explicit}}
	}
	if p := filepath.Join(binDir, "etcd"); isExecutable(p) {
		return p, nil
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, nil
	}
	return "", &MissingError{What: "etcd", Looked: []string{binDir, "PATH"}}
}

// apiserver returns the kube-apiserver binary for version ("v1.36.3" or
// "v1.36", which picks the newest patch release) and its exact version.
func (b binaries) apiserver(version string) (path, exact string, err error) {
	if version == "" {
		version = DefaultVersion
	}
	if !strings.HasPrefix(version, "v") {
		version = "v" + version
	}
	path = filepath.Join(b.dir, "kube-apiserver-"+version)
	if isExecutable(path) {
		return path, version, nil
	}
	if strings.Count(version, ".") == 1 {
		if patch, ok := newestPatch(b.dir, version); ok {
			exact = version + "." + strconv.Itoa(patch)
			return filepath.Join(b.dir, "kube-apiserver-"+exact), exact, nil
		}
	}
	return "", "", &MissingError{What: "kube-apiserver " + version, Looked: []string{b.dir}}
}

// newestPatch finds the highest Z of the kube-apiserver-vX.Y.Z binaries in dir.
func newestPatch(dir, minor string) (int, bool) {
	prefix := "kube-apiserver-" + minor + "."
	matches, _ := filepath.Glob(filepath.Join(dir, prefix+"*"))
	best := -1
	for _, m := range matches {
		patch, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(m), prefix))
		if err == nil && patch > best && isExecutable(m) {
			best = patch
		}
	}
	return best, best >= 0
}

// controlPlaneBinaries are the executables a controller-backed cluster
// runs beside its API server.
type controlPlaneBinaries struct {
	controllerManager string
	scheduler         string
	kwok              string
}

// controlPlane finds kwok and the kube-controller-manager and
// kube-scheduler stamped with the exact version of the cluster's API server
// (e.g. kube-scheduler-v1.36.3) in the bin folder. The stamp matters: it
// sets the feature gates and so the APIs they wait for, and a v1.37
// kube-scheduler waits forever for resource.k8s.io/v1 DeviceTaintRules,
// which a v1.36 API server does not serve. hack/build-kube.sh builds them,
// for the versions in $CONTROL_PLANE_VERSIONS (default: the source's).
func (b binaries) controlPlane(version string) (controlPlaneBinaries, error) {
	cp := controlPlaneBinaries{
		controllerManager: filepath.Join(b.dir, "kube-controller-manager-"+version),
		scheduler:         filepath.Join(b.dir, "kube-scheduler-"+version),
		kwok:              filepath.Join(b.dir, "kwok"),
	}
	for _, p := range []string{cp.controllerManager, cp.scheduler, cp.kwok} {
		if !isExecutable(p) {
			return cp, &MissingError{
				What:   filepath.Base(p) + " (for a cluster with Controllers)",
				Looked: []string{b.dir},
				Hint:   "CONTROL_PLANE_VERSIONS=" + version + " hack/build-kube.sh builds the controllers of that version",
			}
		}
	}
	return cp, nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// check finds every binary the cluster co needs.
func (b binaries) check(co ClusterOptions) error {
	_, exact, err := b.apiserver(co.Version)
	if err != nil {
		return err
	}
	if co.Controllers != nil {
		_, err := b.controlPlane(exact)
		return err
	}
	return nil
}
