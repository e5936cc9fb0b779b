package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is one worker process.
type child struct {
	name   string // Options.Name, for errors
	cmd    *exec.Cmd
	enc    *json.Encoder
	out    *bufio.Reader
	stdin  io.Closer
	stderr *tail
	exited chan struct{}
	once   sync.Once
	timer  *time.Timer // idle timeout, under idleList's lock
}

// startTimeout bounds a child's start, up to its first frame.
const startTimeout = time.Minute

func start(ctx context.Context, o Options) (*child, error) {
	if len(o.Command) == 0 {
		return nil, fmt.Errorf("%s: no command", o.Name)
	}
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	cmd.Env = append(append(Environ(), o.Env...), "GOMAXPROCS=2", "GOMEMLIMIT="+strconv.FormatInt(o.MaxMemory/4*3, 10))
	c := &child{name: o.Name, cmd: cmd, stderr: &tail{max: 4 << 10}, exited: make(chan struct{})}
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
		return nil, fmt.Errorf("%s: %w", o.Name, err)
	}
	c.stdin, c.enc, c.out = in, json.NewEncoder(in), bufio.NewReaderSize(out, 64<<10)
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
		err := c.read(&f, 1<<10)
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
			c.kill() // its stderr is complete once it is reaped
			return c.failed(fmt.Sprintf("%s %s", c.name, c.cmd.Path), err)
		}
		return nil
	case <-timer.C:
		return fmt.Errorf("%s: not started after %s", c.name, startTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// failed is err with the line of the child's stderr that says why.
func (c *child) failed(prefix string, err error) error {
	if msg := c.stderr.String(); msg != "" {
		return fmt.Errorf("%s: %v: %s", prefix, err, keyLine(msg))
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

// read decodes the child's next frame of at most limit bytes.
func (c *child) read(f *frame, limit int64) error {
	line, err := readLine(c.out, limit)
	if err != nil {
		return err
	}
	return json.Unmarshal(line, f)
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
			return nil, timeLimit(o.Timeout)
		case <-tick.C:
			if rss, ok := ResidentMemory(c.cmd.Process.Pid); ok && rss > o.MaxMemory {
				return nil, memoryLimit(o.MaxMemory)
			}
		}
	}
}

// errRemote is a failure the child reported for the call.
type errRemote struct{ msg string }

func (e *errRemote) Error() string { return e.msg }

// frameSlack bounds a frame's keys and error around its result.
const frameSlack = 1 << 20

// converse runs the exchange of one call. No frame of the child is read
// past maxOutput and frameSlack: a child cannot make the parent hold more.
func (c *child) converse(f frame, files Files, maxOutput int64) (json.RawMessage, error) {
	if err := c.enc.Encode(f); err != nil {
		return nil, err
	}
	for {
		var in frame
		if err := c.read(&in, maxOutput+frameSlack); err != nil {
			if errors.Is(err, errLineTooLong) {
				return nil, outputLimit(maxOutput)
			}
			return nil, err
		}
		if in.Done {
			if int64(len(in.Result)) > maxOutput {
				return nil, outputLimit(maxOutput)
			}
			if in.Err != "" {
				return nil, &errRemote{msg: in.Err}
			}
			return in.Result, nil
		}
		if err := c.enc.Encode(answerRead(files, in)); err != nil {
			return nil, err
		}
	}
}

// answerRead answers a child's read.
func answerRead(files Files, in frame) frame {
	if files == nil {
		return frame{Err: fmt.Sprintf("%s %s: this call reads no files", in.Op, in.Name)}
	}
	data, err := files.Read(in.Op, in.Name)
	if err != nil {
		return frame{Err: err.Error(), NotExist: errors.Is(err, fs.ErrNotExist)}
	}
	return frame{Data: data}
}

// ended explains a failed exchange: the child's own error, a limit, or
// the way the child died.
func (c *child) ended(err error) error {
	var re *errRemote
	if err == nil || errors.As(err, &re) || errors.Is(err, ErrLimit) {
		return err
	}
	select { // it is ending: let it, to read how
	case <-c.exited:
	case <-time.After(time.Second):
	}
	c.kill()
	msg := c.stderr.String()
	if strings.Contains(msg, "out of memory") || c.killedBySignal() {
		return limitError(LimitOOM, "ran out of memory (the worker was ended)")
	}
	if strings.Contains(msg, "goroutine stack exceeds") {
		return limitError(LimitStack, "the stack passed its limit (the worker was ended)")
	}
	return c.failed(c.name, err)
}

// killedBySignal says whether the child ended on SIGKILL it did not get
// from us while it answered: the kernel's OOM killer, mostly.
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
