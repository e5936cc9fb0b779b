// Package jsonnet evaluates a Jsonnet program of the fleet repository with
// go-jsonnet, as the `jsonnet` CLI of the same version does
// (`jsonnet -J lib ... main.jsonnet`), except that every file it imports
// is read through a Reader: the caller confines and records the reads, and
// nothing is read from the host's file system or the network.
//
// The cluster's data reaches the program as the external variable
// "regatta" (DataVar): an object whose fields are imported lazily through
// the Reader's Data method, so the caller learns which of them the program
// used.
package jsonnet

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	gojsonnet "github.com/google/go-jsonnet"

	"github.com/regatta-dev/regatta/spec"
)

// DefaultMaxStack is the stack depth of an evaluation: the jsonnet CLI's
// default (--max-stack); a recursion deeper than it fails.
const DefaultMaxStack = 500

// DataVar is the external variable holding the cluster's data.
const DataVar = spec.JsonnetDataVar

// DataFields are the items of DataVar, by Jsonnet path: each is imported
// on first use as the Reader's Data(name).
var DataFields = []string{
	"cluster.name", "cluster.labels", "cluster.values", "cluster.kubernetesVersion",
	"profile.name", "revision",
}

// dataPrefix marks an import of a DataFields item.
const dataPrefix = "regatta-data:"

// Request is one evaluation.
type Request struct {
	// Main is the program file, a repository path.
	Main string `json:"main"`
	// JPath are library folders (repository paths) searched after the
	// importing file's folder, the last first, as the CLI's -J flags.
	JPath []string `json:"jpath,omitempty"`
	// ExtVars and ExtCode are external variables (--ext-str, --ext-code);
	// TLAVars and TLACode top-level arguments (--tla-str, --tla-code).
	ExtVars map[string]string `json:"extVars,omitempty"`
	ExtCode map[string]string `json:"extCode,omitempty"`
	TLAVars map[string]string `json:"tlaVars,omitempty"`
	TLACode map[string]string `json:"tlaCode,omitempty"`
	// MaxStack bounds the stack depth; 0 is DefaultMaxStack.
	MaxStack int `json:"maxStack,omitempty"`
}

// Reader gives an evaluation its files and data.
type Reader interface {
	// ReadFile reads a repository file. An error wrapping fs.ErrNotExist
	// means "not here" (the next library folder is tried); any other
	// error, such as a path leaving the repository, fails the import.
	ReadFile(path string) ([]byte, error)
	// Data returns one DataFields item as JSON.
	Data(name string) ([]byte, error)
}

// Evaluate runs the program and returns its output as the jsonnet CLI
// prints it (JSON, without the final newline). Failures are *Error.
func Evaluate(req Request, rd Reader) (string, error) {
	vm := newVM(req, rd)
	capture := &errorCapture{inner: vm.ErrorFormatter}
	vm.ErrorFormatter = capture
	out, err := vm.EvaluateFile(req.Main)
	if err != nil {
		return "", capture.error(req.Main, err)
	}
	return strings.TrimSuffix(out, "\n"), nil
}

// newVM configures a VM for req: the confined importer, variables,
// arguments and the data variable.
func newVM(req Request, rd Reader) *gojsonnet.VM {
	vm := gojsonnet.MakeVM()
	vm.MaxStack = req.MaxStack
	if vm.MaxStack <= 0 {
		vm.MaxStack = DefaultMaxStack
	}
	vm.SetTraceOut(discard{})
	vm.Importer(&importer{rd: rd, jpath: req.JPath})
	for _, k := range sortedKeys(req.ExtVars) {
		vm.ExtVar(k, req.ExtVars[k])
	}
	for _, k := range sortedKeys(req.ExtCode) {
		vm.ExtCode(k, req.ExtCode[k])
	}
	for _, k := range sortedKeys(req.TLAVars) {
		vm.TLAVar(k, req.TLAVars[k])
	}
	for _, k := range sortedKeys(req.TLACode) {
		vm.TLACode(k, req.TLACode[k])
	}
	if _, set := req.ExtCode[DataVar]; !set {
		vm.ExtCode(DataVar, dataCode())
	}
	return vm
}

// dataCode is the program of DataVar: nested objects whose leaves are
// imports of DataFields, evaluated only when the program reads them.
func dataCode() string {
	groups := map[string][]string{}
	var order []string
	for _, f := range DataFields {
		g, name, nested := strings.Cut(f, ".")
		if !nested {
			g, name = "", f
		}
		if _, seen := groups[g]; !seen {
			order = append(order, g)
		}
		groups[g] = append(groups[g], name)
	}
	var b strings.Builder
	b.WriteString("{")
	for _, g := range order {
		if g != "" {
			fmt.Fprintf(&b, "%s: {", g)
		}
		for _, name := range groups[g] {
			full := name
			if g != "" {
				full = g + "." + name
			}
			fmt.Fprintf(&b, "%s: import %q, ", name, dataPrefix+full)
		}
		if g != "" {
			b.WriteString("}, ")
		}
	}
	b.WriteString("}")
	return b.String()
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// discard drops std.trace output: a program's traces are not the
// daemon's log.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
