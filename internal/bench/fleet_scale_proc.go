package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ProcSample is `regatta run` at a moment: its memory, goroutines, open
// connections to the fleet's API servers and CPU time so far.
type ProcSample struct {
	RSS        int64   `json:"rssBytes"`
	Anon       int64   `json:"rssAnonBytes"`
	HeapInuse  int64   `json:"heapInuseBytes"`
	Goroutines int     `json:"goroutines"`
	Conns      int     `json:"apiServerConnections"`
	CPUSecs    float64 `json:"cpuSeconds"`
}

// sampleProc reads c's /proc entries and its Go metrics; ports are the
// API servers' (connections to other ports are not counted).
func sampleProc(ctx context.Context, c *Child, ports map[int]bool) (ProcSample, error) {
	var s ProcSample
	pid := c.Pid()
	f, err := procStatusFields(fmt.Sprintf("/proc/%d/status", pid), "VmRSS", "RssAnon")
	if err != nil {
		return s, err
	}
	s.RSS, s.Anon = f["VmRSS"], f["RssAnon"]
	cpu, err := ProcCPU(pid)
	if err != nil {
		return s, err
	}
	s.CPUSecs = cpu.Seconds()
	m, err := c.Metrics(ctx)
	if err != nil {
		return s, err
	}
	s.HeapInuse, s.Goroutines = int64(m["go_memstats_heap_inuse_bytes"]), int(m["go_goroutines"])
	s.Conns, err = processConns(pid, ports)
	return s, err
}

// processConns counts pid's established TCP connections to ports.
func processConns(pid int, ports map[int]bool) (int, error) {
	inodes, err := socketInodes(pid)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, name))
		if err != nil {
			continue
		}
		k, err := countConns(f, inodes, ports)
		f.Close()
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

// socketInodes are the inodes of pid's open sockets.
func socketInodes(pid int) (map[string]bool, error) {
	fds, err := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fd)
		if err != nil {
			continue
		}
		if in, ok := strings.CutPrefix(link, "socket:["); ok {
			out[strings.TrimSuffix(in, "]")] = true
		}
	}
	return out, nil
}

// countConns counts the lines of a /proc/net/tcp table that are
// established (st 01), to a port in ports, on a socket in inodes.
func countConns(r io.Reader, inodes map[string]bool, ports map[int]bool) (int, error) {
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "01" || !inodes[f[9]] {
			continue
		}
		_, portHex, ok := strings.Cut(f[2], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseInt(portHex, 16, 32); err == nil && ports[int(p)] {
			n++
		}
	}
	return n, sc.Err()
}
