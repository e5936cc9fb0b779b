package bench

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CPUUse is the CPU time, in seconds, the machine's processes used, by
// command name (kube-apiserver, etcd, regatta, ...). A process's figure
// includes the children it has waited for (regatta's chart workers), and
// "machine" is every CPU's busy time from /proc/stat, whatever ran it.
type CPUUse map[string]float64

// ReadCPUUse reads the CPU time of every live process and of the machine.
// Processes that end between two readings drop out of the difference; the
// ones that matter in a measurement (API servers, etcd, the daemon, the
// bench) live across it.
func ReadCPUUse() CPUUse {
	use := CPUUse{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		comm, secs, ok := procStatCPU(p)
		if ok {
			use[comm] += secs
		}
	}
	if secs, ok := machineBusy(); ok {
		use["machine"] = secs
	}
	return use
}

// Sub returns the CPU used between an earlier reading and this one, for
// the names that used any.
func (u CPUUse) Sub(before CPUUse) CPUUse { return diffAbove(u, before, 0.005) }

// userHZ is the unit of /proc's CPU times on Linux.
const userHZ = 100

// procStatCPU returns a process's command name and its user, system and
// waited-for children's CPU seconds from its stat file.
func procStatCPU(path string) (string, float64, bool) {
	st, err := readProcStat(path)
	if err != nil {
		return "", 0, false
	}
	return st.comm, float64(st.utime+st.stime+st.cutime+st.cstime) / userHZ, true
}

// procStat holds the fields of a /proc/<pid>/stat file the suite reads;
// the times are in USER_HZ ticks.
type procStat struct {
	comm                         string
	utime, stime, cutime, cstime int64
}

// readProcStat parses a /proc/<pid>/stat file.
func readProcStat(path string) (procStat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	// The command (field 2) may hold spaces and parentheses: it runs from
	// the first "(" to the last ")", and fields are counted after it.
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("%s: unexpected format", path)
	}
	fs := strings.Fields(s[end+1:])
	if len(fs) < 15 {
		return procStat{}, fmt.Errorf("%s: unexpected format", path)
	}
	var t [4]int64
	for k, f := range fs[11:15] { // utime, stime, cutime, cstime: fields 14-17
		t[k], _ = strconv.ParseInt(f, 10, 64)
	}
	return procStat{comm: s[open+1 : end], utime: t[0], stime: t[1], cutime: t[2], cstime: t[3]}, nil
}

// machineBusy returns the busy time of every CPU (all but idle and iowait)
// from /proc/stat.
func machineBusy() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fs := strings.Fields(line)
	if len(fs) < 8 || fs[0] != "cpu" {
		return 0, false
	}
	var busy int64
	for i, f := range fs[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 7 { // guest times are already in user
			break
		}
		n, _ := strconv.ParseInt(f, 10, 64)
		busy += n
	}
	return float64(busy) / userHZ, true
}

// String lists the uses, largest first, for logs.
func (u CPUUse) String() string {
	var parts []string
	for _, name := range sortedByValue(u) {
		parts = append(parts, fmt.Sprintf("%s %.1fs", name, u[name]))
	}
	return strings.Join(parts, ", ")
}

func sortedByValue(u CPUUse) []string {
	names := slices.Collect(maps.Keys(u))
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(u[b], u[a]) })
	return names
}
