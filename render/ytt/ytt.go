// Package ytt renders Carvel ytt templates of the fleet repository with
// ytt's Go packages (carvel.dev/ytt), as `ytt -f <path>... --data-values-file
// <file>... --data-value-yaml <kv>...` of the same version does, from files
// the caller read: ytt itself reads nothing from the host or the network.
package ytt

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"carvel.dev/ytt/pkg/cmd/template"
	"carvel.dev/ytt/pkg/cmd/ui"
	"carvel.dev/ytt/pkg/files"
	// The CLI's extension libraries (@ytt:toml), as cmd/ytt links them.
	_ "carvel.dev/ytt/pkg/yttlibraryext"
)

// File is one file given to ytt.
type File struct {
	// Path is the file's repository path, for errors.
	Path string `json:"path"`
	// Rel is the path ytt sees: relative to the folder given as a -f
	// path, or the base name of a file given as one.
	Rel  string `json:"rel"`
	Data []byte `json:"data"`
}

// Group is one -f path: its files, which ytt orders by Rel.
type Group []File

// Request is one render.
type Request struct {
	Groups []Group `json:"groups"`
	// ValuesFiles are plain YAML data-values files (--data-values-file),
	// in order.
	ValuesFiles []File `json:"valuesFiles,omitempty"`
	// ValuesYAML are data values "key.path=<YAML>" (--data-value-yaml),
	// applied last, in order.
	ValuesYAML []string `json:"valuesYAML,omitempty"`
	// ValuesStrings are data values "key.path=string" (--data-value).
	ValuesStrings []string `json:"valuesStrings,omitempty"`
}

// Render runs ytt on the request's files and returns its output as the
// CLI prints it (YAML documents). Failures are *Error.
func Render(req Request) (string, error) {
	var in []*files.File
	rel := map[string]string{}
	for _, g := range req.Groups {
		sorted := append(Group(nil), g...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Rel < sorted[j].Rel })
		for _, f := range sorted {
			file, err := files.NewFileFromSource(files.NewBytesSource(f.Rel, f.Data))
			if err != nil {
				return "", &Error{File: f.Path, Msg: err.Error()}
			}
			in = append(in, file)
			if _, seen := rel[f.Rel]; !seen {
				rel[f.Rel] = f.Path
			}
		}
	}
	opts := template.NewOptions()
	values := map[string]File{}
	for i, f := range req.ValuesFiles {
		name := fmt.Sprintf("values-%d-%s", i, f.Rel)
		values[name] = f
		opts.DataValuesFlags.FromFiles = append(opts.DataValuesFlags.FromFiles, name)
		rel[f.Rel] = f.Path
	}
	opts.DataValuesFlags.ReadFilesFunc = func(name string) ([]*files.File, error) {
		f, ok := values[name]
		if !ok {
			return nil, fmt.Errorf("no data-values file %q", name)
		}
		file, err := files.NewFileFromSource(files.NewBytesSource(f.Rel, f.Data))
		return []*files.File{file}, err
	}
	opts.DataValuesFlags.EnvironFunc = func() []string { return nil }
	opts.DataValuesFlags.KVsFromYAML = req.ValuesYAML
	opts.DataValuesFlags.KVsFromStrings = req.ValuesStrings
	out := opts.RunWithFiles(template.Input{Files: files.NewSortedFiles(in)}, ui.NewCustomWriterTTY(false, io.Discard, io.Discard))
	if out.Err != nil {
		return "", errorOf(out.Err, rel)
	}
	text, err := out.DocSet.AsBytes()
	if err != nil {
		return "", &Error{Msg: err.Error()}
	}
	return string(text), nil
}

// Error is a failed render, placed at the first file and line ytt's
// message names.
type Error struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Msg is ytt's message, as the CLI prints it.
	Msg string `json:"msg"`
}

func (e *Error) Error() string {
	switch {
	case e.File == "":
		return e.Msg
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// place matches ytt's "rel/path.yml:12" in a message, or a YAML parse
// error's "template 'rel/path.yml': yaml: line 12".
var place = regexp.MustCompile(`([\w./@-]+\.(?:ya?ml|star|txt)):(\d+)|'([\w./@-]+)': yaml: line (\d+)`)

func errorOf(err error, rel map[string]string) *Error {
	msg := strings.TrimSpace(err.Error())
	e := &Error{Msg: msg}
	for _, m := range place.FindAllStringSubmatch(msg, -1) {
		file, line := m[1], m[2]
		if file == "" {
			file, line = m[3], m[4]
		}
		if p, ok := rel[file]; ok {
			e.File = p
			e.Line, _ = strconv.Atoi(line)
			break
		}
	}
	return e
}

// Kind names renders in a sandbox worker.
const Kind = "ytt"

// answer is a render's result across the sandbox.
type answer struct {
	Output string `json:"output"`
	Error  *Error `json:"error,omitempty"`
}
