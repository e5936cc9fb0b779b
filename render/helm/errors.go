package helm

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ErrNoVersion: no chart version matches the requested version or range.
var ErrNoVersion = errors.New("no matching chart version")

// ChartError names the chart (and version, once known) an error belongs to:
// "chart podinfo 6.5.0: templates/deployment.yaml:12: ...".
type ChartError struct {
	Chart, Version string
	Err            error
}

func (e *ChartError) Error() string {
	if e.Version == "" {
		return fmt.Sprintf("chart %s: %v", e.Chart, e.Err)
	}
	return fmt.Sprintf("chart %s %s: %v", e.Chart, e.Version, e.Err)
}

func (e *ChartError) Unwrap() error { return e.Err }

// TemplateError locates a template or rendered-YAML error. File is relative
// to the chart (subcharts as charts/<name>/...). Line is 0 when unknown.
type TemplateError struct {
	File string
	Line int
	Msg  string
	Err  error
}

func (e *TemplateError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

func (e *TemplateError) Unwrap() error { return e.Err }

// DigestError: a downloaded archive does not have the digest the index
// announced. The archive is not used and not cached.
type DigestError struct {
	URL, Want, Got string
}

func (e *DigestError) Error() string {
	return fmt.Sprintf("archive %s has digest %s, the index says %s: refusing it", e.URL, e.Got, e.Want)
}

// VersionError: no version of the chart matches.
type VersionError struct {
	Source, Constraint string
	Available          []string
}

func (e *VersionError) Error() string {
	avail := strings.Join(e.Available, ", ")
	if len(e.Available) > 8 {
		avail = strings.Join(e.Available[:8], ", ") + ", ..."
	}
	if avail == "" {
		avail = "none"
	}
	c := e.Constraint
	if c == "" {
		c = "any stable version"
	}
	return fmt.Sprintf("no version matches %q in %s (available: %s)", c, e.Source, avail)
}

func (e *VersionError) Is(target error) bool { return target == ErrNoVersion }

// HTTPError is an unexpected HTTP status.
type HTTPError struct {
	URL    string
	Status int
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("GET %s: %d %s", e.URL, e.Status, httpStatusText(e.Status))
}

// tplLocation matches "<chart>/templates/x.yaml:12" and
// "<chart>/templates/x.yaml:12:5" in Helm's template errors.
var tplLocation = regexp.MustCompile(`([\w.\-]+(?:/[\w.\-]+)+):(\d+)(?::\d+)?`)

// yamlError matches SortManifests' "YAML parse error on <file>: ...".
var yamlError = regexp.MustCompile(`^YAML parse error on ([^:]+): (.*)$`)

// yamlLine finds "line 5" in a YAML parser message.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// executing drops Go template's `executing "name" ` noise.
var executing = regexp.MustCompile(`executing "[^"]*" `)

// templateError turns Helm's render errors into a TemplateError relative to
// the chart; the innermost location wins (for include and tpl chains).
func templateError(chartName string, err error) error {
	msg := err.Error()
	if m := yamlError.FindStringSubmatch(msg); m != nil {
		line := 0
		if l := yamlLine.FindStringSubmatch(m[2]); l != nil {
			line, _ = strconv.Atoi(l[1])
		}
		return &TemplateError{File: chartRelative(chartName, m[1]), Line: line,
			Msg: "rendered YAML: " + m[2], Err: err}
	}
	locs := tplLocation.FindAllStringSubmatchIndex(msg, -1)
	if locs == nil {
		return err
	}
	last := locs[len(locs)-1]
	line, _ := strconv.Atoi(msg[last[4]:last[5]])
	rest := strings.TrimLeft(msg[last[1]:], "): ")
	rest = executing.ReplaceAllString(rest, "")
	return &TemplateError{File: chartRelative(chartName, msg[last[2]:last[3]]), Line: line, Msg: rest, Err: err}
}

// chartRelative strips the top chart's name from a template path.
func chartRelative(chartName, p string) string {
	return strings.TrimPrefix(p, chartName+"/")
}
