package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets this test binary serve as the worker, with a watchdog far
// below the timeouts the tests' calls name.
func TestMain(m *testing.M) {
	if os.Getenv(WorkerEnv) != "" {
		if err := Serve(os.Stdin, os.Stdout, testHandlers, 100*time.Millisecond); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var testHandlers = Handlers{
	"sleep": func(req json.RawMessage, _ Files) (any, error) {
		var d time.Duration
		if err := json.Unmarshal(req, &d); err != nil {
			return nil, err
		}
		time.Sleep(d)
		return "slept", nil
	},
	"big": func(req json.RawMessage, _ Files) (any, error) {
		var n int
		if err := json.Unmarshal(req, &n); err != nil {
			return nil, err
		}
		return strings.Repeat("x", n), nil
	},
	"read": func(req json.RawMessage, files Files) (any, error) {
		data, err := files.Read("file", "a.txt")
		return string(data), err
	},
}

func testPool(t *testing.T, o Options) *Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o.Command, o.Env = []string{exe}, []string{WorkerEnv + "=1"}
	p := New(o)
	t.Cleanup(p.Close)
	return p
}

// TestWatchdogFollowsTheCallTimeout: a child ends itself at twice the
// timeout its parent names for the call, not at a fixed watchdog, so a
// call within a long timeout is not cut short.
func TestWatchdogFollowsTheCallTimeout(t *testing.T) {
	p := testPool(t, Options{Timeout: 5 * time.Second})
	var out string
	if err := p.Call(context.Background(), "sleep", 500*time.Millisecond, nil, &out); err != nil || out != "slept" {
		t.Errorf("a 500ms call within a 5s timeout: %q, %v", out, err)
	}
}

// TestTimeLimit: a call past its timeout fails with a LimitError naming
// the time, in the sandbox's wording, and the child is ended.
func TestTimeLimit(t *testing.T) {
	p := testPool(t, Options{Timeout: 200 * time.Millisecond})
	var out string
	err := p.Call(context.Background(), "sleep", time.Minute, nil, &out)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitTime || !errors.Is(err, ErrLimit) || err.Error() != "stopped at a limit: ran longer than 200ms" {
		t.Errorf("err = %v, want a time limit", err)
	}
	if n := len(p.Idle()); n != 0 {
		t.Errorf("%d children kept after a limit", n)
	}
}

// TestOutputLimit: an answer past MaxOutput fails as an output limit.
func TestOutputLimit(t *testing.T) {
	p := testPool(t, Options{MaxOutput: 1 << 20})
	var out string
	for _, n := range []int{1<<20 + 1, 3 << 20} { // past the bound, past the frame's slack
		err := p.Call(context.Background(), "big", n, nil, &out)
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != LimitOutput || !strings.Contains(err.Error(), "the output passes 1 MiB") {
			t.Errorf("%d bytes: err = %v, want an output limit", n, err)
		}
	}
	if err := p.Call(context.Background(), "big", 1000, nil, &out); err != nil || len(out) != 1000 {
		t.Errorf("1000 bytes: %d, %v", len(out), err)
	}
}

// TestCallWithoutFiles: a child that reads during a call given no Files
// gets an error, and the parent does not fail.
func TestCallWithoutFiles(t *testing.T) {
	p := testPool(t, Options{})
	var out string
	err := p.Call(context.Background(), "read", nil, nil, &out)
	if err == nil || !strings.Contains(err.Error(), "reads no files") {
		t.Errorf("err = %v", err)
	}
}

// TestReadLineHoldsNoMoreThanItsLimit: a line past the limit is refused
// before more than the limit and a buffer is read.
func TestReadLineHoldsNoMoreThanItsLimit(t *testing.T) {
	src := &countingReader{}
	_, err := readLine(bufio.NewReaderSize(src, 4<<10), 64<<10)
	if !errors.Is(err, errLineTooLong) || src.n > 64<<10+8<<10 {
		t.Errorf("err = %v after reading %d bytes", err, src.n)
	}
	line, err := readLine(bufio.NewReader(strings.NewReader("{}\nnext")), 3)
	if err != nil || string(line) != "{}\n" {
		t.Errorf("line %q, %v", line, err)
	}
}

// countingReader is an endless line without a newline.
type countingReader struct{ n int }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	r.n += len(p)
	return len(p), nil
}
