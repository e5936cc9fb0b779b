package app

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// defaultMemoryLimit is the floor of the soft memory limit of `regatta run
// --memory-limit auto` outside a memory-limited container; after every
// garbage collection the limit rises to what the runtime holds besides the
// heap plus 1.5 times the live heap when that is more (adaptiveLimit), so a
// large fleet gets a limit that grows with it (see docs/operations.md).
const defaultMemoryLimit = 32 << 20

// cgroupMemoryFiles hold the memory limit of the process's container
// (cgroup v2, then v1).
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// memoryLimit resolves --memory-limit: "auto" (the default) leaves a
// GOMEMLIMIT of the environment alone, else takes 90 % of the container's
// memory limit, else adaptive; "0" or "off" sets none; anything else is a
// quantity such as 256Mi or 1G. It returns the limit to set, and false when
// the runtime's own (GOMEMLIMIT) stays.
func memoryLimit(flag string, getenv func(string) string, cgroupFiles []string) (int64, bool, error) {
	switch flag {
	case "off", "0":
		return math.MaxInt64, true, nil
	case "auto", "":
		if getenv("GOMEMLIMIT") != "" {
			return 0, false, nil
		}
		if limit := cgroupMemoryLimit(cgroupFiles); limit > 0 {
			return limit / 10 * 9, true, nil
		}
		return adaptive, true, nil
	}
	q, err := resource.ParseQuantity(flag)
	if err != nil || q.Sign() <= 0 {
		return 0, false, usageError("--memory-limit must be auto, off or a size such as 256Mi, got %q", flag)
	}
	return q.Value(), true, nil
}

// adaptive is memoryLimit's answer for a limit that follows the live heap
// from defaultMemoryLimit up.
const adaptive = -1

// adaptiveLimit returns the limit for a live heap of live bytes and nonHeap
// bytes of other runtime memory (stacks, metadata): at least
// defaultMemoryLimit, else room for the heap to grow by half of live before a
// collection (as GOGC=50 would; Go's default is GOGC=100).
func adaptiveLimit(live, nonHeap uint64) int64 {
	return max(defaultMemoryLimit, int64(nonHeap+live+live/2))
}

// followLiveHeap sets the adaptive limit now and after every garbage
// collection until ctx ends.
func followLiveHeap(ctx context.Context) {
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	set := func() {
		metrics.Read(samples)
		v := make([]uint64, len(samples))
		for i, s := range samples {
			if s.Value.Kind() == metrics.KindUint64 {
				v[i] = s.Value.Uint64()
			}
		}
		nonHeap := v[1] - min(v[1], v[2]+v[3]+v[4]+v[5])
		debug.SetMemoryLimit(adaptiveLimit(v[0], nonHeap))
	}
	set()
	afterEachGC(ctx, set)
}

// afterEachGC calls fn after each garbage collection (from the finalizer
// goroutine) until ctx ends.
func afterEachGC(ctx context.Context, fn func()) {
	type sentinel struct{ _ [16]byte } // not tiny: its own allocation
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
			if ctx.Err() == nil {
				fn()
				arm()
			}
		})
	}
	arm()
}

// cgroupMemoryLimit returns the first limit found in files, 0 for none.
func cgroupMemoryLimit(files []string) int64 {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && n > 0 && n < 1<<50 { // v1 reports "no limit" as a huge number
			return n
		}
		return 0 // "max"
	}
	return 0
}

// setMemoryLimit applies --memory-limit (an adaptive one follows the heap
// until ctx ends) and describes the outcome for the log.
func setMemoryLimit(ctx context.Context, flag string) (string, error) {
	limit, set, err := memoryLimit(flag, os.Getenv, cgroupMemoryFiles)
	if err != nil {
		return "", err
	}
	if !set {
		return "GOMEMLIMIT=" + os.Getenv("GOMEMLIMIT"), nil
	}
	if limit == adaptive {
		followLiveHeap(ctx)
		return fmt.Sprintf("at least %dMiB, following the live heap", defaultMemoryLimit>>20), nil
	}
	debug.SetMemoryLimit(limit)
	if limit == math.MaxInt64 {
		return "off", nil
	}
	return fmt.Sprintf("%dMiB", limit>>20), nil
}
