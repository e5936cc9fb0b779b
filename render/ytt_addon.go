package render

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/regatta-dev/regatta/render/sandbox"
	"github.com/regatta-dev/regatta/render/ytt"
	"github.com/regatta-dev/regatta/spec"
)

// yttData are the items of the cluster's data a ytt add-on gets as
// data.values.regatta; its templates may read any, so each is a read of
// the render (the key holds them all).
var yttData = []dataRead{
	{Path: []string{"Cluster", "Name"}}, {Path: []string{"Cluster", "Labels"}},
	{Path: []string{"Cluster", "Values"}}, {Path: []string{"Cluster", "KubernetesVersion"}},
	{Path: []string{"Profile", "Name"}},
}

// renderYtt renders a ytt add-on: its files, read through the add-on's
// repository view (confined and recorded), the data-values files and
// values, and the cluster's data.
func (a *addonRender) renderYtt(ap *addonPlan, field string) ([]Object, error) {
	y := ap.addon.Ytt
	req := ytt.Request{}
	first := ""
	for i, p := range y.Paths {
		g, p, err := a.yttFiles(fmt.Sprintf("%s.paths[%d]", field, i), p)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			first = p
		}
		req.Groups = append(req.Groups, g)
	}
	for i, p := range y.ValuesFiles {
		g, _, err := a.yttFiles(fmt.Sprintf("%s.valuesFiles[%d]", field, i), p)
		if err != nil {
			return nil, err
		}
		sort.Slice(g, func(i, j int) bool { return g[i].Rel < g[j].Rel })
		req.ValuesFiles = append(req.ValuesFiles, g...)
	}
	values, err := a.yttValues(field, y.Values)
	if err != nil {
		return nil, err
	}
	req.ValuesYAML = values
	out, err := ytt.Run(a.ctx, a.r.opts.Sandbox, req)
	if err != nil {
		return nil, yttError(first, err)
	}
	return decodeObjects(first, []byte(out))
}

// yttValues are the --data-value-yaml flags: the add-on's values, one per
// top-level key, then the cluster's data.
func (a *addonRender) yttValues(field string, values map[string]any) ([]string, error) {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		out = append(out, k+"="+jsonText(values[k]))
	}
	a.tpl.record(yttData)
	d := a.plan.data
	labels, vals := map[string]string{}, map[string]any{}
	if d.Cluster.Labels != nil {
		labels = d.Cluster.Labels
	}
	if d.Cluster.Values != nil {
		vals = d.Cluster.Values
	}
	data := map[string]any{
		"cluster": map[string]any{"name": d.Cluster.Name, "labels": labels, "values": vals,
			"kubernetesVersion": d.Cluster.KubernetesVersion},
		"profile": map[string]any{"name": d.Profile.Name},
	}
	return append(out, spec.YttDataValue+"="+jsonText(data)), nil
}

// yttFiles reads a -f path, templated: one file (ytt sees its base name)
// or every file below a folder (ytt sees paths relative to it), symlinks
// followed inside the repository. It returns the path it read.
func (a *addonRender) yttFiles(field, text string) (ytt.Group, string, error) {
	p, err := a.pathField(field, text)
	if err != nil {
		return nil, "", err
	}
	info, err := a.fs.Stat(p)
	if err != nil {
		return nil, "", a.fieldError(field, describePathError(p, err))
	}
	if !info.IsDir() {
		data, err := a.fs.ReadFile(p)
		if err != nil {
			return nil, "", a.fieldError(field, describePathError(p, err))
		}
		return ytt.Group{{Path: p, Rel: path.Base(p), Data: data}}, p, nil
	}
	var paths []string
	if err := a.walk(p, func(string) bool { return true }, map[string]bool{}, &paths); err != nil {
		return nil, "", err
	}
	g := make(ytt.Group, 0, len(paths))
	for _, f := range paths {
		data, err := a.fs.ReadFile(f)
		if err != nil {
			return nil, "", fileError(f, 0, describePathError(f, err))
		}
		g = append(g, ytt.File{Path: f, Rel: strings.TrimPrefix(f, p+"/"), Data: data})
	}
	return g, p, nil
}

// yttError places a ytt failure at the file and line its message names.
func yttError(first string, err error) error {
	if ye, ok := err.(*ytt.Error); ok {
		file := ye.File
		if file == "" {
			file = first
		}
		msg := "ytt: " + ye.Msg
		if strings.Contains(msg, "not declared in schema") && strings.Contains(msg, "found: "+spec.YttDataValue) {
			msg += fmt.Sprintf("\n(regatta sets data.values.%s to the cluster's data: declare it in the schema, e.g. `#@schema/type any=True` above `%s: {}`)", spec.YttDataValue, spec.YttDataValue)
		}
		return &Error{File: file, Line: ye.Line, Err: &wrapped{msg: msg, err: err}}
	}
	e := &Error{File: first, Err: err}
	if errors.Is(err, sandbox.ErrLimit) {
		e.Err = fmt.Errorf("%w: %w", ErrTemplateLimit, err)
	}
	return e
}
