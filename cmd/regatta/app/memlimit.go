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

// defaultMemoryLimit is the soft memory limit of `regatta run --memory-limit
// auto` outside a memory-limited container: it makes the garbage collector
// return memory sooner for small fleets, and is soft, so a larger fleet only
// costs more collections (see docs/operations.md).
const defaultMemoryLimit = 96 << 20

// cgroupMemoryFiles hold the memory limit of the process's container
// (cgroup v2, then v1).
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// memoryLimit resolves --memory-limit: "auto" (the default) leaves a
// GOMEMLIMIT of the environment alone, else takes 90 % of the container's
// memory limit, else defaultMemoryLimit; "0" or "off" sets none; anything
// else is a quantity such as 256Mi or 1G. It returns the limit to set, and
// false when the runtime's own (GOMEMLIMIT) stays.
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
		return defaultMemoryLimit, true, nil
	}
	q, err := resource.ParseQuantity(flag)
	if err != nil || q.Sign() <= 0 {
		return 0, false, usageError("--memory-limit must be auto, off or a size such as 256Mi, got %q", flag)
	}
	return q.Value(), true, nil
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

// setMemoryLimit applies --memory-limit and describes the outcome for the log.
func setMemoryLimit(flag string) (string, error) {
	limit, set, err := memoryLimit(flag, os.Getenv, cgroupMemoryFiles)
	if err != nil {
		return "", err
	}
	if !set {
		return "GOMEMLIMIT=" + os.Getenv("GOMEMLIMIT"), nil
	}
	debug.SetMemoryLimit(limit)
	if limit == math.MaxInt64 {
		return "off", nil
	}
	return fmt.Sprintf("%dMiB", limit>>20), nil
}
