package render

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

// templateData is what templates see:
//
//	.Cluster.Name .Cluster.Labels .Cluster.Values .Cluster.KubernetesVersion
//	.Profile.Name .Revision
type templateData struct {
	Cluster  clusterData
	Profile  profileData
	Revision string
}

type clusterData struct {
	Name              string
	Labels            map[string]string
	Values            map[string]any
	KubernetesVersion string
}

type profileData struct{ Name string }

// templater executes Go templates (text/template, sprig functions,
// missingkey=error) with one request's data, and remembers whether any
// text actually held a template action: a render that executed none does
// not depend on the cluster's data, and its cache key leaves the data out.
type templater struct {
	data  templateData
	funcs template.FuncMap
	used  atomic.Bool
}

// templateFuncs is sprig's text function map without env and expandenv:
// a repository must not read the controller's environment (credentials).
func templateFuncs() template.FuncMap {
	fm := sprig.TxtFuncMap()
	delete(fm, "env")
	delete(fm, "expandenv")
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
	t.used.Store(true)
	tpl, err := template.New(name).Funcs(t.funcs).Option("missingkey=error").Parse(string(text))
	if err != nil {
		return nil, templateError(name, err)
	}
	var out bytes.Buffer
	if err := tpl.Execute(&out, t.data); err != nil {
		return nil, templateError(name, err)
	}
	return out.Bytes(), nil
}

// executeString is execute for a short string such as a path.
func (t *templater) executeString(name, text string) (string, error) {
	out, err := t.execute(name, []byte(text))
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
