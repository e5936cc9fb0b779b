package helm

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart"

	"github.com/regatta-dev/regatta/render/netpolicy"
)

// Helm's chartutil.ValidateAgainstSchema compiles a chart's
// values.schema.json with loaders that read any host file (file://) and
// fetch any URL with their own HTTP client, around the URL policy. regatta
// validates values itself, as Helm does and with Helm's messages, through
// schemaLoader: a schema reads its chart's own files and, over http(s),
// only what the Renderer's policy client fetches.

// schemaURL is the URL Helm gives a chart's values.schema.json; relative
// references resolve against it, so file:///x names the chart's file x.
const schemaURL = "file:///values.schema.json"

// schemaFile is the schema's name in a chart, for messages.
const schemaFile = "values.schema.json"

// ErrSchemaRef is the error of a schema reference that the render may not
// read: a host file, a URL the policy refuses, an unknown scheme. A
// reference that could not be fetched (offline, not found) is not one.
var ErrSchemaRef = errors.New("schema reference refused")

// remoteLoader loads an absolute http(s) URL named by a schema; nil
// refuses them all.
type remoteLoader interface {
	load(rawURL string) (any, error)
}

// validateSchemas checks values against the schema of c and, for each
// subchart given values, the subchart's schema: Helm's
// chartutil.ValidateAgainstSchema with regatta's loader.
func validateSchemas(c *chart.Chart, values map[string]any, remote remoteLoader) error {
	var sb strings.Builder
	refused := false
	if c.Schema != nil {
		if err := validateSingle(c, values, remote); err != nil {
			fmt.Fprintf(&sb, "%s:\n", c.Name())
			sb.WriteString(err.Error())
			refused = refused || errors.Is(err, ErrSchemaRef)
		}
	}
	for _, sub := range c.Dependencies() {
		raw, ok := values[sub.Name()]
		if !ok || raw == nil {
			continue
		}
		subValues, ok := raw.(map[string]any)
		if !ok {
			fmt.Fprintf(&sb, "%s:\ninvalid type for values: expected object (map), got %T\n", sub.Name(), raw)
			continue
		}
		if err := validateSchemas(sub, subValues, remote); err != nil {
			sb.WriteString(err.Error())
			refused = refused || errors.Is(err, ErrSchemaRef)
		}
	}
	if sb.Len() > 0 {
		return &schemaError{msg: sb.String(), refused: refused}
	}
	return nil
}

// schemaError is Helm's message for the schemas of a chart and its
// subcharts; errors.Is(ErrSchemaRef) when one named what it may not read.
type schemaError struct {
	msg     string
	refused bool
}

func (e *schemaError) Error() string { return e.msg }

func (e *schemaError) Is(target error) bool { return e.refused && target == ErrSchemaRef }

// validateSingle is Helm's ValidateAgainstSingleSchema with schemaLoader.
func validateSingle(c *chart.Chart, values map[string]any, remote remoteLoader) (reterr error) {
	defer func() {
		if r := recover(); r != nil {
			reterr = fmt.Errorf("unable to validate schema: %s", r)
		}
	}()
	s, err := compileSchema(c, remote)
	if err != nil {
		return err
	}
	if err := s.Validate(values); err != nil {
		msg := strings.TrimPrefix(err.Error(), "jsonschema validation failed with '"+schemaURL+"#'\n")
		return errors.New(msg + "\n")
	}
	return nil
}

// compileSchema compiles c's values.schema.json.
func compileSchema(c *chart.Chart, remote remoteLoader) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(c.Schema))
	if err != nil {
		return nil, err
	}
	comp := jsonschema.NewCompiler()
	l := &schemaLoader{chart: c, remote: remote}
	comp.UseLoader(l)
	if err := comp.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	s, err := comp.Compile(schemaURL)
	if err != nil && l.refused {
		// the compiler's errors do not unwrap to the loader's
		return nil, &schemaError{msg: err.Error(), refused: true}
	}
	return s, err
}

// schemaLoader resolves what a chart's schema references ($ref, $schema,
// $dynamicRef, after $id rebasing): file: URLs name the chart's own files
// (never the host's), http(s) go to remote, urn: stays permissive as in
// Helm, anything else is refused. The compiler's built-in meta-schemas of
// the known drafts never reach it.
type schemaLoader struct {
	chart   *chart.Chart
	remote  remoteLoader
	refused bool // a reference was refused
}

func (l *schemaLoader) Load(raw string) (any, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, l.refuse(raw, "not a URL")
	}
	switch u.Scheme {
	case "file":
		return l.chartFile(raw, u)
	case "http", "https":
		if l.remote == nil {
			return nil, l.refuse(raw, "no network here")
		}
		doc, err := l.remote.load(raw)
		if err != nil {
			refused := errors.Is(err, ErrSchemaRef) || errors.Is(err, netpolicy.ErrRefused)
			l.refused = l.refused || refused
			return nil, &SchemaRefError{Chart: l.chart.Name(), Ref: raw, Reason: "cannot be read", Err: err, Refused: refused}
		}
		return doc, nil
	case "urn":
		// Helm's default: an unresolved URN is the permissive schema.
		return true, nil
	}
	return nil, l.refuse(raw, "only the chart's files and http(s) URLs under the URL policy may be referenced")
}

// chartFile returns the chart file a file: URL names, resolved against
// the chart's root (where values.schema.json is).
func (l *schemaLoader) chartFile(raw string, u *url.URL) (any, error) {
	if u.Host != "" || u.Opaque != "" {
		return nil, l.refuse(raw, "a schema may read only its chart's own files")
	}
	name := strings.TrimPrefix(path.Clean("/"+u.Path), "/")
	if name == schemaFile {
		return jsonschema.UnmarshalJSON(bytes.NewReader(l.chart.Schema))
	}
	for _, f := range l.chart.Files {
		if path.Clean(f.Name) == name {
			return jsonschema.UnmarshalJSON(bytes.NewReader(f.Data))
		}
	}
	return nil, l.refuse(raw, "not a file of the chart (a schema may read only its chart's own files, never the host's)")
}

func (l *schemaLoader) refuse(raw, why string) error {
	l.refused = true
	return &SchemaRefError{Chart: l.chart.Name(), Ref: raw, Reason: why, Refused: true}
}

// SchemaRefError is a schema reference the render could not or may not
// read; errors.Is(ErrSchemaRef) when it may not.
type SchemaRefError struct {
	Chart, Ref, Reason string
	Err                error // why the fetch failed
	Refused            bool
}

func (e *SchemaRefError) Error() string {
	// the compiler's error around it names the reference
	msg := fmt.Sprintf("chart %s: %s: %s", e.Chart, schemaFile, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *SchemaRefError) Unwrap() []error {
	if e.Refused {
		return []error{ErrSchemaRef, e.Err}
	}
	return []error{e.Err}
}
