package render

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/regatta-dev/regatta/render/jsonnet"
	"github.com/regatta-dev/regatta/render/sandbox"
	"github.com/regatta-dev/regatta/render/ytt"
	"github.com/regatta-dev/regatta/spec"
)

// WorkerHandlers are the kinds of calls a sandbox worker serves for a
// Renderer (Options.Sandbox): regatta's __render-worker and test binaries
// serve them.
func WorkerHandlers() sandbox.Handlers {
	return sandbox.Handlers{jsonnet.Kind: jsonnet.Handler, ytt.Kind: ytt.Handler}
}

// renderJsonnet evaluates a Jsonnet add-on's program and reads its output
// as manifests. Every file it imports is read through the add-on's
// repository view (confined, recorded for the cache key) and every item
// of the cluster's data it uses is recorded as a template read.
func (a *addonRender) renderJsonnet(ap *addonPlan, field string) ([]Object, error) {
	j := ap.addon.Jsonnet
	main, err := a.sourcePath(ap, field+".path", j.Path)
	if err != nil {
		return nil, err
	}
	req := jsonnet.Request{Main: main, JPath: j.JPath, ExtVars: j.ExtVars, ExtCode: j.ExtCode,
		TLAVars: j.TLAs, TLACode: j.TLACode}
	out, err := jsonnet.Run(a.ctx, a.r.opts.Sandbox, req, jsonnetReader{a})
	if err != nil {
		return nil, jsonnetError(main, err)
	}
	ms, err := jsonnet.Manifests(out)
	if err != nil {
		return nil, &Error{File: main, Err: fmt.Errorf("jsonnet: %w", err)}
	}
	var objs []Object
	for _, m := range ms {
		o, err := flatten(main, 0, m.Object)
		if err != nil {
			return nil, &Error{File: main, Err: fmt.Errorf("jsonnet %s: %w", m.Where, errors.Unwrap(err))}
		}
		objs = append(objs, o...)
	}
	return objs, nil
}

// jsonnetError places an evaluation failure at its file, line and column.
func jsonnetError(main string, err error) error {
	var je *jsonnet.Error
	if !errors.As(err, &je) {
		return &Error{File: main, Err: err}
	}
	e := &Error{File: je.File, Line: je.Line, Column: je.Column, Err: &wrapped{msg: "jsonnet: " + je.Msg, err: err}}
	if errors.Is(err, sandbox.ErrLimit) {
		e.Err = &wrapped{msg: "jsonnet: " + je.Msg, err: fmt.Errorf("%w: %w", ErrTemplateLimit, err)}
	}
	return e
}

// jsonnetReader gives a Jsonnet evaluation the add-on's files and the
// cluster's data.
type jsonnetReader struct{ a *addonRender }

// ReadFile reads a repository file through the add-on's view: a path
// leaving the repository (or the tenant's folder) fails the import, a
// missing one lets the importer try the next library folder.
func (r jsonnetReader) ReadFile(p string) ([]byte, error) {
	data, err := r.a.fs.ReadFile(p)
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, spec.ErrOutsideTenant):
		return nil, outsideError{msg: p + ": " + spec.ErrOutsideTenant.Error()}
	case errors.Is(err, spec.ErrPathEscapes):
		return nil, outsideError{msg: p + ": " + spec.ErrPathEscapes.Error()}
	case notExist(err):
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	return nil, err
}

// outsideError is a read leaving the repository or the tenant's folder:
// it fails the import (it is jsonnet.ErrOutside, not fs.ErrNotExist).
type outsideError struct{ msg string }

func (e outsideError) Error() string { return e.msg }

func (e outsideError) Is(target error) bool { return target == jsonnet.ErrOutside }

// jsonnetData maps the items of jsonnet.DataFields to the template data
// they are (a read of .Cluster.Labels keys the render by the labels).
var jsonnetData = map[string][]string{
	"cluster.name":              {"Cluster", "Name"},
	"cluster.labels":            {"Cluster", "Labels"},
	"cluster.values":            {"Cluster", "Values"},
	"cluster.kubernetesVersion": {"Cluster", "KubernetesVersion"},
	"profile.name":              {"Profile", "Name"},
	"revision":                  {"Revision"},
}

// Data returns one item of the cluster's data as JSON and records the
// read; an absent map is an empty object.
func (r jsonnetReader) Data(name string) ([]byte, error) {
	p, ok := jsonnetData[name]
	if !ok {
		return nil, fmt.Errorf("no such item %q", name)
	}
	read := dataRead{Path: p}
	r.a.tpl.record([]dataRead{read})
	v := lookupRead(r.a.plan.data, read)
	if v == "null" && (name == "cluster.labels" || name == "cluster.values") {
		v = "{}"
	}
	return []byte(v), nil
}
