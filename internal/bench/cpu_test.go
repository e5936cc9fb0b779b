package bench

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProcStatCPU(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stat")
	// pid (comm with a space) state ppid ... utime stime cutime cstime ...
	line := "42 (kube-apiserver ) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 12 0 100 0 0\n"
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	comm, secs, ok := procStatCPU(path)
	if !ok || comm != "kube-apiserver " || secs != 3.5 {
		t.Fatalf("procStatCPU = %q, %v, %v; want \"kube-apiserver \", 3.5, true", comm, secs, ok)
	}
}

func TestCPUUseSub(t *testing.T) {
	before := CPUUse{"etcd": 1, "gone": 5, "idle": 2}
	after := CPUUse{"etcd": 3.5, "new": 1, "idle": 2}
	got := after.Sub(before)
	want := CPUUse{"etcd": 2.5, "new": 1}
	if len(got) != len(want) || got["etcd"] != 2.5 || got["new"] != 1 {
		t.Fatalf("Sub = %v, want %v", got, want)
	}
	if s := got.String(); s != "etcd 2.5s, new 1.0s" {
		t.Fatalf("String = %q", s)
	}
}

func TestReadCPUUseSeesThisProcess(t *testing.T) {
	use := ReadCPUUse()
	if use["machine"] <= 0 {
		t.Fatalf("no machine busy time in %v", use)
	}
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Skip("no /proc")
	}
	if _, ok := use[string(self[:len(self)-1])]; !ok {
		t.Fatalf("this process (%s) is not in %v", self, use)
	}
}
