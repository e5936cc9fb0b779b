package sandbox

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
)

// envKeys are the variables a child inherits: none of the others, which
// may hold credentials (a child has no business holding them).
var envKeys = []string{"PATH", "TMPDIR", "GOCOVERDIR", "GODEBUG", "GOTRACEBACK"}

// Environ is the environment a child inherits from this process.
func Environ() []string {
	var env []string
	for _, k := range envKeys {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// ResidentMemory reads VmRSS of a process from /proc (Linux only).
func ResidentMemory(pid int) (int64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// errLineTooLong: a frame passes the reader's bound.
var errLineTooLong = errors.New("frame too large")

// readLine reads one line of at most limit bytes, without holding more.
func readLine(r *bufio.Reader, limit int64) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if int64(len(line))+int64(len(chunk)) > limit {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, io.EOF) && len(line) > 0:
			return nil, io.ErrUnexpectedEOF
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// keyLine picks the line of a child's stderr that says why it ended: a
// Go runtime's "fatal error:" or "panic:", else the last line.
func keyLine(s string) string {
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") {
			return l
		}
	}
	return lines[len(lines)-1]
}
