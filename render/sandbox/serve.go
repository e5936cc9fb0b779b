package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// WorkerEnv is set (to "1") in the environment of a test binary that
// serves as the worker: its TestMain calls Serve when it is set.
const WorkerEnv = "REGATTA_SANDBOX_WORKER"

// Serve answers calls from r on w until r ends: the child side of a Pool.
// A call that outlives watchdog ends the process (exit code 3), in case
// the parent that should kill it is gone.
func Serve(r io.Reader, w io.Writer, handlers Handlers, watchdog time.Duration) error {
	out := bufio.NewWriterSize(w, 64<<10)
	s := &server{dec: json.NewDecoder(bufio.NewReaderSize(r, 64<<10)), enc: json.NewEncoder(out), out: out}
	if err := s.send(frame{Done: true}); err != nil {
		return fmt.Errorf("sandbox worker: %w", err)
	}
	if watchdog <= 0 {
		watchdog = 2 * DefaultTimeout
	}
	for {
		var f frame
		if err := s.dec.Decode(&f); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("sandbox worker: read call: %w", err)
		}
		dog := time.AfterFunc(watchdog, func() { os.Exit(3) })
		ans := s.serve(handlers, f)
		dog.Stop()
		if err := s.send(ans); err != nil {
			return fmt.Errorf("sandbox worker: write answer: %w", err)
		}
	}
}

type server struct {
	dec *json.Decoder
	enc *json.Encoder
	out *bufio.Writer
}

func (s *server) send(f frame) error {
	if err := s.enc.Encode(f); err != nil {
		return err
	}
	return s.out.Flush()
}

func (s *server) serve(handlers Handlers, f frame) frame {
	h, ok := handlers[f.Kind]
	if !ok {
		return frame{Done: true, Err: fmt.Sprintf("sandbox worker: unknown kind %q", f.Kind)}
	}
	res, err := h(f.Req, s)
	if err != nil {
		return frame{Done: true, Err: err.Error()}
	}
	js, err := json.Marshal(res)
	if err != nil {
		return frame{Done: true, Err: err.Error()}
	}
	return frame{Done: true, Result: js}
}

// Read asks the parent for a read (Files in the child).
func (s *server) Read(op, name string) ([]byte, error) {
	if err := s.send(frame{Op: op, Name: name}); err != nil {
		return nil, err
	}
	var ans frame
	if err := s.dec.Decode(&ans); err != nil {
		return nil, err
	}
	switch {
	case ans.NotExist:
		return nil, fmt.Errorf("%s: %w", ans.Err, fs.ErrNotExist)
	case ans.Err != "":
		return nil, errors.New(ans.Err)
	}
	return ans.Data, nil
}
