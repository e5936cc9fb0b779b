package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dirPrefix starts the name of every environment folder; the test binary's
// process id follows, so that folders of dead binaries can be found.
const dirPrefix = "regatta-testenv-"

// makeEnvDir creates the folder of a new environment under parent (default:
// /dev/shm when usable, else the system temp folder), first removing folders
// that earlier test binaries left when they died.
func makeEnvDir(parent string) (string, error) {
	if parent == "" {
		parent = defaultParent()
	}
	removeStaleDirs(parent)
	dir, err := os.MkdirTemp(parent, fmt.Sprintf("%s%d-", dirPrefix, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("create the environment folder: %w", err)
	}
	return dir, nil
}

// defaultParent prefers tmpfs: etcd's fsyncs cost nothing there.
func defaultParent() string {
	const shm = "/dev/shm"
	if fi, err := os.Stat(shm); err == nil && fi.IsDir() && syscall.Access(shm, 2 /* W_OK */) == nil {
		return shm
	}
	return os.TempDir()
}

// removeStaleDirs removes environment folders whose process is gone.
func removeStaleDirs(parent string) {
	matches, _ := filepath.Glob(filepath.Join(parent, dirPrefix+"*"))
	for _, dir := range matches {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(dir), dirPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(dir)
		}
	}
}
