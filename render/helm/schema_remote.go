package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart"

	"github.com/regatta-dev/regatta/render/netpolicy"
)

// Bounds of what the schemas of one render may fetch.
const (
	maxSchemaDocs = 32
	maxSchemaSize = 8 << 20 // per document and in all
)

// remoteDoc is one http(s) document a schema named: its JSON, or why it
// could not be read. A worker gets these from its parent and fetches
// nothing itself.
type remoteDoc struct {
	Data json.RawMessage `json:"data,omitempty"`
	Err  string          `json:"err,omitempty"`
	// Refused: the URL policy refused it (Err says why).
	Refused bool  `json:"refused,omitempty"`
	err     error // in this process: the error itself
}

// schemaFetcher fetches schema documents through the Renderer's HTTP
// client (the URL policy's client in regatta: every request and redirect
// is checked) and records them for a worker.
type schemaFetcher struct {
	ctx context.Context
	r   *Renderer

	mu    sync.Mutex
	docs  map[string]remoteDoc
	total int
}

func (r *Renderer) newSchemaFetcher(ctx context.Context) *schemaFetcher {
	return &schemaFetcher{ctx: ctx, r: r, docs: map[string]remoteDoc{}}
}

func (f *schemaFetcher) load(raw string) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.docs[raw]
	if !ok {
		d = f.fetch(raw)
		f.docs[raw] = d
	}
	return d.decode()
}

// fetch GETs one document within the bounds; called with mu held.
func (f *schemaFetcher) fetch(raw string) remoteDoc {
	if len(f.docs) >= maxSchemaDocs {
		return remoteDoc{Err: fmt.Sprintf("more than %d documents referenced", maxSchemaDocs)}
	}
	ctx, cancel := context.WithTimeout(f.ctx, f.r.opts.FetchTimeout)
	defer cancel()
	data, err := f.r.getLimited(ctx, raw, basicAuth{}, int64(maxSchemaSize-f.total))
	if err != nil {
		return remoteDoc{Err: err.Error(), err: err, Refused: errors.Is(err, netpolicy.ErrRefused)}
	}
	f.total += len(data)
	if !json.Valid(data) {
		return remoteDoc{Err: "not a JSON document"}
	}
	return remoteDoc{Data: data}
}

// recorded returns the documents fetched so far.
func (f *schemaFetcher) recorded() map[string]remoteDoc {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]remoteDoc, len(f.docs))
	for k, v := range f.docs {
		out[k] = v
	}
	return out
}

func (d remoteDoc) decode() (any, error) {
	switch {
	case d.err != nil:
		return nil, d.err
	case d.Refused:
		return nil, fmt.Errorf("%s: %w", d.Err, ErrSchemaRef)
	case d.Err != "":
		return nil, errors.New(d.Err)
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(d.Data))
}

// recordedDocs serves a worker the documents its parent fetched.
type recordedDocs map[string]remoteDoc

func (r recordedDocs) load(raw string) (any, error) {
	d, ok := r[raw]
	if !ok {
		return nil, errors.New("not fetched by the parent process (a render worker has no network)")
	}
	return d.decode()
}

// prefetchSchemas compiles the schema of c and of every subchart with f,
// so that f holds every document their references reach. Compile errors
// are left to the validation, which meets them again. A schema larger
// than maxSchemaSize is not compiled here, outside the worker's bounds: its
// remote references then fail in the worker as not fetched.
func prefetchSchemas(c *chart.Chart, f *schemaFetcher) {
	if c.Schema != nil && len(c.Schema) <= maxSchemaSize {
		func() {
			defer func() { _ = recover() }()
			_, _ = compileSchema(c, f)
		}()
	}
	for _, sub := range c.Dependencies() {
		prefetchSchemas(sub, f)
	}
}
