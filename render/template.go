package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

// templateData is what templates see:
//
//	.Cluster.Name .Cluster.Labels .Cluster.Values .Cluster.KubernetesVersion
//	.Profile.Name .Revision
//	.Event.Name .Event.SourceCluster .Event.Resource .Event.Resources (event profiles)
type templateData struct {
	Cluster  clusterData
	Profile  profileData
	Revision string
	Event    eventData
}

type clusterData struct {
	Name              string
	Labels            map[string]string
	Values            map[string]any
	KubernetesVersion string
}

type profileData struct{ Name string }

// templater executes Go templates (text/template, sprig functions,
// missingkey=error) with one request's data, bounded by the renderer's
// TemplateLimits, and records which data the executed templates read
// (see readsOf): a render's cache key holds only those values.
type templater struct {
	ctx context.Context
	r   *Renderer
	// data is the request's; copied on first use, since sprig's set and
	// merge change maps in place.
	data   templateData
	copied bool
	mu     sync.Mutex
	reads  map[string]dataRead
	// fields, when set, memoizes results of executeString by template
	// and the values of what it reads (facts gives them): a plan's
	// templated paths then execute once per distinct result, not once
	// per cluster.
	fields *lru[fieldMemo]
	facts  func([]dataRead) string
}

// fieldMemo is a memoized field result. Failures are kept too (a bomb in
// a path fails once per distinct input, not once per cluster), except
// cancellations.
type fieldMemo struct {
	out string
	err error
}

func newTemplater(ctx context.Context, r *Renderer, data templateData) *templater {
	return &templater{ctx: ctx, r: r, data: data}
}

// templateFuncs is sprig's text function map without env and expandenv:
// a repository must not read the controller's environment (credentials),
// and without getHostByName: nor look names up from the daemon's network.
func templateFuncs() template.FuncMap {
	fm := sprig.TxtFuncMap()
	delete(fm, "env")
	delete(fm, "expandenv")
	delete(fm, "getHostByName")
	return fm
}

// isTemplate reports whether text holds a template action.
func isTemplate(text []byte) bool { return bytes.Contains(text, []byte("{{")) }

// execute renders text, named name (a repository path or a field path) in
// errors. Text without "{{" is returned as is.
func (t *templater) execute(name string, text []byte) ([]byte, error) {
	if !isTemplate(text) {
		return text, nil
	}
	c := t.r.templates.get(name, text)
	if c.err != nil {
		return nil, c.err
	}
	t.record(c.reads)
	inst := c.get(t.r.templates)
	defer c.put(inst)
	inst.b.reset(t.ctx, t.r.limits)
	out := &limitedWriter{b: inst.b, buf: make([]byte, 0, len(text)+len(text)/4)}
	err := inst.t.Execute(out, t.dataCopy())
	if inst.b.err != nil {
		return nil, limitError(name, err, inst.b.err)
	}
	if err != nil {
		return nil, templateError(name, err)
	}
	return out.buf, nil
}

func (t *templater) record(reads []dataRead) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reads == nil {
		t.reads = map[string]dataRead{}
	}
	for _, r := range reads {
		t.reads[r.String()] = r
	}
}

// readList returns the reads recorded so far, sorted.
func (t *templater) readList() []dataRead {
	t.mu.Lock()
	defer t.mu.Unlock()
	return sortedReads(t.reads)
}

func (t *templater) dataCopy() templateData {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.copied {
		t.data.Cluster.Labels = maps.Clone(t.data.Cluster.Labels)
		t.data.Cluster.Values, _ = deepCopyValue(t.data.Cluster.Values).(map[string]any)
		t.data.Event = copyEvent(t.data.Event)
		t.copied = true
	}
	return t.data
}

// deepCopyValue copies maps and lists of a values tree.
func deepCopyValue(v any) any { return copyTree(v, func(leaf any) any { return leaf }) }

// copyTree copies the maps and lists of v (nil ones stay nil), passing
// every other value through leaf.
func copyTree(v any, leaf func(any) any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyTree(e, leaf)
		}
		return out
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyTree(e, leaf)
		}
		return out
	}
	return leaf(v)
}

// executeString is execute for a short string such as a path.
func (t *templater) executeString(name, text string) (string, error) {
	if t.fields == nil || !strings.Contains(text, "{{") {
		out, err := t.execute(name, []byte(text))
		return string(out), err
	}
	c := t.r.templates.get(name, []byte(text))
	key := ""
	if c.err == nil {
		key = hashStrings(c.name, c.text, t.facts(c.reads))
		if m, ok := t.fields.get(key); ok {
			return m.out, m.err
		}
	}
	out, err := t.execute(name, []byte(text))
	if key != "" && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		t.fields.put(key, fieldMemo{out: string(out), err: err}, int64(len(key)+len(out)+256))
	}
	return string(out), err
}

// executeValues templates every string leaf of a values tree, in place
// on a copy. Field paths name the leaves in errors: values.image.tag.
func (t *templater) executeValues(name string, v any) (any, error) {
	switch x := v.(type) {
	case string:
		return t.executeString(name, x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := t.executeValues(name+"."+k, e)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := t.executeValues(fmt.Sprintf("%s[%d]", name, i), e)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

// hasTemplateLeaf reports whether a values tree has a templated string.
func hasTemplateLeaf(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, "{{")
	case map[string]any:
		for _, e := range x {
			if hasTemplateLeaf(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasTemplateLeaf(e) {
				return true
			}
		}
	}
	return false
}

// TemplateError is a failed template: a parse error or a failed execution
// such as a missing key.
type TemplateError struct {
	// Template is the file or field the template came from.
	Template string
	Line     int
	// Key is the missing map key, when that is the failure.
	Key string
	// Action is the failing action, such as <.Cluster.Values.region>.
	Action string
	Err    error
}

func (e *TemplateError) Error() string {
	switch {
	case e.Key != "":
		return fmt.Sprintf("template: missing key %q at %s%s", e.Key, e.Action, optionalHint(e.Action, e.Key))
	case e.Action != "":
		return fmt.Sprintf("template: at %s: %v", e.Action, e.Err)
	}
	return fmt.Sprintf("template: %v", e.Err)
}

func (e *TemplateError) Unwrap() error { return e.Err }

// optionalHint shows how to read a key that may be missing, for an action
// such as <.Cluster.Values.region>.
func optionalHint(action, key string) string {
	field := strings.TrimSuffix(strings.TrimPrefix(action, "<"), ">")
	parent, ok := strings.CutSuffix(field, "."+key)
	if !ok || !strings.HasPrefix(parent, ".") || strings.ContainsAny(parent, " ()|$") {
		return ""
	}
	return fmt.Sprintf(" (add the key, or make it optional: {{ index %s %q }})", parent, key)
}

var (
	// template: NAME:LINE:COL: executing "NAME" at <.X.y>: map has no entry for key "y"
	tplExecRE  = regexp.MustCompile(`^template: .*?:(\d+):\d+: executing ".*?" at (<.*?>): (.*)$`)
	tplParseRE = regexp.MustCompile(`^template: .*?:(\d+): (.*)$`)
	tplKeyRE   = regexp.MustCompile(`^map has no entry for key "(.*)"$`)
)

// templateError turns a text/template error into a located *Error.
func templateError(name string, err error) error {
	msg := err.Error()
	te := &TemplateError{Template: name, Err: err}
	if m := tplExecRE.FindStringSubmatch(msg); m != nil {
		te.Line, _ = strconv.Atoi(m[1])
		te.Action, te.Err = m[2], errors.New(m[3])
		if k := tplKeyRE.FindStringSubmatch(m[3]); k != nil {
			te.Key = k[1]
		}
	} else if m := tplParseRE.FindStringSubmatch(msg); m != nil {
		te.Line, _ = strconv.Atoi(m[1])
		te.Err = errors.New(strings.TrimSpace(m[2]))
	}
	return &Error{File: name, Line: te.Line, Err: te}
}

// limitError locates a limit failure: at the line of the action or loop
// that passed it, when the execution error names one.
func limitError(name string, execErr, limit error) error {
	te := &TemplateError{Template: name, Err: limit}
	if m := tplExecRE.FindStringSubmatch(execErr.Error()); m != nil {
		te.Line, _ = strconv.Atoi(m[1])
	}
	return &Error{File: name, Line: te.Line, Err: te}
}
