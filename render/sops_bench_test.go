package render

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// BenchmarkRenderSOPS1000 renders an add-on of 1,000 SOPS-encrypted
// Secrets (age, data and stringData encrypted) without the result cache:
// every iteration decrypts every file and verifies its MAC. It also
// reports the process's CPU time per render (cpu-ms/op, user and system),
// which a busy machine disturbs less than the wall time. internal/bench/REPORT.md
// compares it before and after render/sops moved to the sops library.
func BenchmarkRenderSOPS1000(b *testing.B) {
	fsys := memRepo(b)
	keys := testKeyring(b, "age.key")
	for i := range 1000 {
		plain := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s%04d\n  namespace: bench\nstringData:\n  user: app\n  password: value-%d\ndata:\n  token: dGVzdC10b2tlbg==\n", i, i)
		enc, err := sops.Encrypt("s.yaml", []byte(plain), sops.SecretRegex, keys.Recipients())
		if err != nil {
			b.Fatal(err)
		}
		fsys[fmt.Sprintf("addons/bench/s%04d.yaml", i)] = &fstest.MapFile{Data: enc}
	}
	prof := sopsProfile(b, fsys, spec.Addon{Name: "s", Manifests: &spec.ManifestsSource{Path: "addons/bench"}})
	r := New(Options{Keys: keys, CacheBytes: -1})
	ctx := context.Background()
	b.ResetTimer()
	start := cpuTime(b)
	for b.Loop() {
		res, err := r.Render(ctx, Request{FS: fsys, Profile: prof, Cluster: prodCluster()})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(res.Objects()); n != 1000 {
			b.Fatalf("%d objects", n)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-start)/1e6/float64(b.N), "cpu-ms/op")
}

// cpuTime is the user and system CPU time of the process so far, in ns.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
