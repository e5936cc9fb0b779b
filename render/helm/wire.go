package helm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"helm.sh/helm/v3/pkg/chart"
)

// workerRequest is one render sent to a worker process: the loaded chart
// (subcharts included) and the request without its file system.
type workerRequest struct {
	Chart   *wireChart `json:"chart"`
	Request Request    `json:"request"`
	// Schemas are the http(s) documents the chart's schemas name, as the
	// parent fetched them under the URL policy.
	Schemas   recordedDocs  `json:"schemas,omitempty"`
	Timeout   time.Duration `json:"timeout"`
	MaxOutput int64         `json:"maxOutput"`
}

// wireChart is a chart with its subcharts, which chart.Chart does not
// serialize.
type wireChart struct {
	Chart        *chart.Chart `json:"chart"`
	Dependencies []*wireChart `json:"dependencies,omitempty"`
}

// workerResponse is the worker's answer: rendered files or an error.
type workerResponse struct {
	Rendered *rendered  `json:"rendered,omitempty"`
	Err      *wireError `json:"err,omitempty"`
}

// wireError carries a render error across the process boundary, keeping
// what callers look at: the location and whether a limit stopped it.
type wireError struct {
	Msg   string `json:"msg"`
	File  string `json:"file,omitempty"`
	Line  int    `json:"line,omitempty"`
	Limit bool   `json:"limit,omitempty"`
	// SchemaRef: a schema named what the render may not read.
	SchemaRef bool `json:"schemaRef,omitempty"`
}

func toWire(c *chart.Chart) *wireChart {
	w := &wireChart{Chart: c}
	for _, d := range c.Dependencies() {
		w.Dependencies = append(w.Dependencies, toWire(d))
	}
	return w
}

func (w *wireChart) chart() *chart.Chart {
	c := w.Chart
	c.SetDependencies()
	for _, d := range w.Dependencies {
		c.AddDependency(d.chart())
	}
	return c
}

func wireErrorOf(err error) *wireError {
	w := &wireError{Msg: err.Error(), Limit: errors.Is(err, ErrTemplateLimit), SchemaRef: errors.Is(err, ErrSchemaRef)}
	var te *TemplateError
	if errors.As(err, &te) {
		w.File, w.Line, w.Msg = te.File, te.Line, te.Msg
	}
	return w
}

func (w *wireError) err() error {
	var inner error = errors.New(w.Msg)
	switch {
	case w.Limit:
		inner = limitMessage(w.Msg)
	case w.SchemaRef:
		inner = refusedMessage(w.Msg)
	}
	if w.File == "" {
		return inner
	}
	return &TemplateError{
		File: w.File,
		Line: w.Line,
		Msg:  w.Msg,
		Err:  inner,
	}
}

// limitMessage is a worker's limit error: its message as it was, and
// errors.Is(ErrTemplateLimit).
type limitMessage string

func (m limitMessage) Error() string { return string(m) }

func (m limitMessage) Is(target error) bool { return target == ErrTemplateLimit }

// refusedMessage is a worker's schema reference error: its message as it
// was, and errors.Is(ErrSchemaRef).
type refusedMessage string

func (m refusedMessage) Error() string { return string(m) }

func (m refusedMessage) Is(target error) bool { return target == ErrSchemaRef }

// writeFrame writes v as a length-prefixed JSON frame.
func writeFrame(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // manifests are not HTML: keep < > & as they are
	if err := enc.Encode(v); err != nil {
		return err
	}
	data := buf.Bytes()
	var head [8]byte
	binary.BigEndian.PutUint64(head[:], uint64(len(data)))
	if _, err := w.Write(head[:]); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

// errFrameTooLarge: a frame passes the reader's bound.
var errFrameTooLarge = errors.New("frame too large")

// readFrame reads one frame of at most limit bytes (0: no limit) into v.
func readFrame(r io.Reader, limit int64, v any) error {
	var head [8]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint64(head[:])
	if limit > 0 && n > uint64(limit) {
		return fmt.Errorf("%w: %d bytes", errFrameTooLarge, n)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
