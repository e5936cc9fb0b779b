package helm

import (
	"errors"

	"helm.sh/helm/v3/pkg/chart"
)

// workerRequest is one render sent to a worker process: the loaded chart
// (subcharts included) and the request without its file system.
type workerRequest struct {
	Chart   *wireChart `json:"chart"`
	Request Request    `json:"request"`
	// Schemas are the http(s) documents the chart's schemas name, as the
	// parent fetched them under the URL policy.
	Schemas recordedDocs `json:"schemas,omitempty"`
	// MaxOutput bounds the rendered files (the sandbox carries the
	// timeout).
	MaxOutput int64 `json:"maxOutput"`
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
