package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is one worker process.
type child struct {
	cmd    *exec.Cmd
	enc    *json.Encoder
	dec    *json.Decoder
	stdin  io.Closer
	stderr *tail
	exited chan struct{}
	once   sync.Once
	timer  *time.Timer // idle timeout, under idleList's lock
}

// startTimeout bounds a child's start, up to its first frame.
const startTimeout = time.Minute

// envKeys are the variables a child inherits: none of the others, which
// may hold credentials.
var envKeys = []string{"PATH", "TMPDIR", "GOCOVERDIR", "GODEBUG", "GOTRACEBACK"}

func start(ctx context.Context, o Options) (*child, error) {
	if len(o.Command) == 0 {
		return nil, errors.New("sandbox: no worker command")
	}
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	for _, k := range envKeys {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Env = append(append(cmd.Env, o.Env...), "GOMAXPROCS=2", "GOMEMLIMIT="+strconv.FormatInt(o.MaxMemory/4*3, 10))
	c := &child{cmd: cmd, stderr: &tail{max: 4 << 10}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	c.stdin, c.enc = in, json.NewEncoder(in)
	c.dec = json.NewDecoder(bufio.NewReaderSize(out, 64<<10))
	go func() { _ = cmd.Wait(); close(c.exited) }()
	if err := c.hello(ctx); err != nil {
		c.kill()
		return nil, err
	}
	return c, nil
}

// hello waits for the child's first frame, so that its start does not
// count against a call's timeout.
func (c *child) hello(ctx context.Context) error {
	done := make(chan error, 1)
	go func() {
		var f frame
		err := c.dec.Decode(&f)
		if err == nil && !f.Done {
			err = errors.New("unexpected first frame")
		}
		done <- err
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("sandbox worker %s: %v %s", c.cmd.Path, err, c.stderr.String())
		}
		return nil
	case <-timer.C:
		return fmt.Errorf("sandbox worker: not started after %s", startTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// call sends one call and answers its reads until its result, within the
// limits.
func (c *child) call(ctx context.Context, o Options, f frame, files Files) (json.RawMessage, error) {
	type answer struct {
		result json.RawMessage
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := c.converse(f, files, o.MaxOutput)
		done <- answer{r, err}
	}()
	timer := time.NewTimer(o.Timeout)
	defer timer.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case a := <-done:
			return a.result, c.ended(a.err)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			return nil, limitError("ran longer than %s", o.Timeout)
		case <-tick.C:
			if rss, ok := residentMemory(c.cmd.Process.Pid); ok && rss > o.MaxMemory {
				return nil, limitError("used more than %d MiB of memory", o.MaxMemory>>20)
			}
		}
	}
}

// errRemote is a failure the child reported for the call.
type errRemote struct{ msg string }

func (e *errRemote) Error() string { return e.msg }

// converse runs the exchange of one call.
func (c *child) converse(f frame, files Files, maxOutput int64) (json.RawMessage, error) {
	if err := c.enc.Encode(f); err != nil {
		return nil, err
	}
	for {
		var in frame
		if err := c.dec.Decode(&in); err != nil {
			return nil, err
		}
		if in.Done {
			if int64(len(in.Result)) > maxOutput {
				return nil, limitError("the output passes %d MiB", maxOutput>>20)
			}
			if in.Err != "" {
				return nil, &errRemote{msg: in.Err}
			}
			return in.Result, nil
		}
		data, err := files.Read(in.Op, in.Name)
		ans := frame{Data: data}
		if err != nil {
			ans = frame{Err: err.Error(), NotExist: errors.Is(err, fs.ErrNotExist)}
		}
		if err := c.enc.Encode(ans); err != nil {
			return nil, err
		}
	}
}

// ended explains a failed exchange: the child's own error, a limit, or
// the way the child died.
func (c *child) ended(err error) error {
	var re *errRemote
	if err == nil || errors.As(err, &re) || errors.Is(err, ErrLimit) {
		return err
	}
	select {
	case <-c.exited:
	case <-time.After(time.Second):
	}
	c.kill()
	msg := c.stderr.String()
	if strings.Contains(msg, "out of memory") || c.killedBySignal() {
		return limitError("ran out of memory (the worker was ended)")
	}
	if strings.Contains(msg, "goroutine stack exceeds") {
		return limitError("the stack passed its limit (the worker was ended)")
	}
	return fmt.Errorf("sandbox worker: %v: %s", err, lastLine(msg))
}

func (c *child) killedBySignal() bool {
	ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// kill ends the child and waits for it.
func (c *child) kill() {
	c.once.Do(func() {
		_ = c.stdin.Close()
		_ = c.cmd.Process.Kill()
		<-c.exited
	})
}

// idleList keeps children between calls.
type idleList struct {
	mu   sync.Mutex
	list []*child
}

func (l *idleList) take() *child {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.list)
	if n == 0 {
		return nil
	}
	c := l.list[n-1]
	l.list = l.list[:n-1]
	c.timer.Stop()
	return c
}

// put keeps c unless it holds much memory or enough children are idle.
func (l *idleList) put(c *child, o Options) {
	if rss, ok := residentMemory(c.cmd.Process.Pid); ok && rss > o.MaxMemory/2 {
		c.kill()
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.list) >= o.MaxWorkers {
		go c.kill()
		return
	}
	l.list = append(l.list, c)
	c.timer = time.AfterFunc(o.IdleTimeout, func() { l.expire(c) })
}

func (l *idleList) expire(c *child) {
	l.mu.Lock()
	found := false
	for i, x := range l.list {
		if x == c {
			l.list = append(l.list[:i], l.list[i+1:]...)
			found = true
			break
		}
	}
	l.mu.Unlock()
	if found {
		c.kill()
	}
}

func (l *idleList) drain() {
	l.mu.Lock()
	list := l.list
	l.list = nil
	l.mu.Unlock()
	for _, c := range list {
		c.timer.Stop()
		c.kill()
	}
}

// residentMemory reads VmRSS of a process (Linux).
func residentMemory(pid int) (int64, bool) {
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

func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") {
			return l
		}
	}
	return lines[len(lines)-1]
}
