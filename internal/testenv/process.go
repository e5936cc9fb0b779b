package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// process is a child process in its own process group, logging to a file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFrom int64         // size of the log when this run started
	done    chan struct{} // closed once the process has exited
	err     error         // exit status; read only after done is closed
}

// startProcess runs path with args in a new process group, with the test
// binary's environment plus env. Output goes to logPath, appended so that
// restarts keep the earlier runs' logs.
//
// The kernel kills the process (SIGKILL) should the test binary die without
// stopping it: a panicking test, a -timeout, Ctrl-C. Linux ties that signal
// to the OS thread that forked, and Go only ends a thread when a goroutine
// locked to it (runtime.LockOSThread) returns without unlocking, which tests
// here do not do.
func startProcess(name, logPath string, env []string, path string, args ...string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	logFrom, _ := logFile.Seek(0, io.SeekEnd)
	fmt.Fprintf(logFile, "==== %s %s %s\n", time.Now().Format(time.RFC3339), path, strings.Join(args, " "))
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, logFrom: logFrom, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// errAddrInUse marks a process that exited because its port was taken.
var errAddrInUse = errors.New("address already in use")

// exitError describes how the process ended, with the tail of its log.
func (p *process) exitError() error {
	tail := p.logTail()
	err := fmt.Errorf("%s exited (%v); last lines of %s:\n%s", p.name, p.err, p.logPath, tail)
	if strings.Contains(tail, "address already in use") {
		return fmt.Errorf("%w: %w", errAddrInUse, err)
	}
	return err
}

// stop sends SIGTERM to the process group, then SIGKILL after grace, and
// waits for the process to end.
func (p *process) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	pgid := p.pid()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Anything left in the group (there should be nothing) goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// logTail returns the last 25 lines of this run's log.
func (p *process) logTail() string {
	return fileTail(p.logPath, p.logFrom, 25, 8<<10)
}

// fileTail returns the last lines of path after offset from, reading at
// most maxBytes.
func fileTail(path string, from int64, lines int, maxBytes int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		_, _ = f.Seek(max(from, fi.Size()-maxBytes), io.SeekStart)
	}
	data, err := io.ReadAll(f)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	all := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return "    " + string(bytes.Join(all, []byte("\n    ")))
}

// rssBytes reads the resident set size of a process from /proc.
func rssBytes(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				return 0, fmt.Errorf("parse VmRSS of pid %d: %w", pid, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

func isAddrInUse(err error) bool { return errors.Is(err, errAddrInUse) }
