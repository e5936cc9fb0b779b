package app

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// autoGCPercent is the GOGC of `regatta run --memory-limit auto` without a
// limit to follow: the heap grows by half its live size between
// collections instead of doubling (Go's default, 100). A relative target
// never makes the collector spin: a soft memory limit derived from the
// live heap did, on an idle daemon whose heap had fragmented (see
// docs/operations.md).
const autoGCPercent = 50

// cgroupMemoryFiles hold the memory limit of the process's container
// (cgroup v2, then v1).
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// memoryLimit resolves --memory-limit: "auto" (the default) leaves a
// GOMEMLIMIT of the environment alone, else takes 90 % of the container's
// memory limit, else none (relative, see setMemoryLimit); "0" or "off" sets none; anything else is a
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
		return relative, true, nil
	}
	q, err := resource.ParseQuantity(flag)
	if err != nil || q.Sign() <= 0 {
		return 0, false, usageError("--memory-limit must be auto, off or a size such as 256Mi, got %q", flag)
	}
	return q.Value(), true, nil
}

// relative is memoryLimit's answer when there is no limit to follow: no
// soft limit, and the collector runs at autoGCPercent unless $GOGC is set.
const relative = -1

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

// setMemoryLimit applies --memory-limit and describes the outcome for the
// log.
func setMemoryLimit(flag string) (string, error) {
	limit, set, err := memoryLimit(flag, os.Getenv, cgroupMemoryFiles)
	if err != nil {
		return "", err
	}
	if !set {
		return "GOMEMLIMIT=" + os.Getenv("GOMEMLIMIT"), nil
	}
	if limit == relative {
		if gogc := os.Getenv("GOGC"); gogc != "" {
			return "none, GOGC=" + gogc, nil
		}
		debug.SetGCPercent(autoGCPercent)
		return fmt.Sprintf("none, GOGC=%d (the heap grows by half its live size between collections)", autoGCPercent), nil
	}
	debug.SetMemoryLimit(limit)
	if limit == math.MaxInt64 {
		return "off", nil
	}
	return fmt.Sprintf("%dMiB", limit>>20), nil
}
