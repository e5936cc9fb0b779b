package bench

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestCheckStatic builds a tiny program both ways: the static build
// passes, the cgo one is refused.
func TestCheckStatic(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc for the cgo build")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"os/user\"\n\nfunc main() { _, _ = user.Current() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(cgo, out string) string {
		t.Helper()
		cmd := exec.Command("go", "build", "-o", out, src)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo, "GOFLAGS=")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build (CGO_ENABLED=%s): %v\n%s", cgo, err, b)
		}
		return out
	}
	if err := checkStatic(build("0", filepath.Join(dir, "static"))); err != nil {
		t.Errorf("static build refused: %v", err)
	}
	if err := checkStatic(build("1", filepath.Join(dir, "dynamic"))); !errors.Is(err, errDynamic) {
		t.Errorf("cgo build: got %v, want errDynamic", err)
	}
}

// TestProcCPU: ProcCPU agrees with getrusage on this process's CPU time
// after it burns some.
func TestProcCPU(t *testing.T) {
	rusage := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	before, err := ProcCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	start := rusage()
	for x := 0; rusage()-start < 200*time.Millisecond; x++ {
	}
	burnt := rusage() - start
	after, err := ProcCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got := after - before; got < burnt-50*time.Millisecond || got > burnt+100*time.Millisecond {
		t.Errorf("ProcCPU advanced %s while getrusage counted %s", got, burnt)
	}
}
