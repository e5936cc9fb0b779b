// Command filegraph measures how the files of one Go package depend on
// each other, to show whether a package reads top-down.
//
//	go run ./hack/filegraph [-v] [-e] ./reconciler
//
// Definitions:
//   - nodes are the package's non-test .go files (for the build tags in
//     GOFLAGS);
//   - an edge A→B (A≠B) exists when file A uses a package-level name
//     declared in file B: a func, type, var or const, a method, or a field
//     of a struct type of the package (as go/types resolves identifiers,
//     selectors and composite literal keys);
//   - a back-reference is an edge A→B where B also reaches A, that is A and
//     B lie in one strongly connected component (SCC);
//   - layers is the length, in nodes, of the longest path in the DAG of
//     SCCs: files that use no other file are layer 1.
//
// It prints files, edges, back-references (each with -v), layers and the
// SCCs of more than one file; -e lists every edge. Dependencies are
// imported from the export data `go list -export` builds, so no module
// dependency is needed.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	verbose := flag.Bool("v", false, "list every back-reference")
	edges := flag.Bool("e", false, "list every edge")
	flag.Parse()
	dir := "."
	if flag.NArg() > 0 {
		dir = flag.Arg(0)
	}
	g, err := load(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "filegraph:", err)
		os.Exit(1)
	}
	report(os.Stdout, g, *verbose)
	if *edges {
		for _, n := range g.nodes {
			for _, m := range g.targets(n) {
				fmt.Printf("  edge %s -> %s\n", n, m)
			}
		}
	}
}

// listed is the part of `go list -json` filegraph reads.
type listed struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	DepOnly    bool
}

// load type-checks the package in dir and returns its file graph.
func load(dir string) (graph, error) {
	out, err := exec.Command("go", "list", "-export", "-deps", "-json", dir).Output()
	if err != nil {
		return graph{}, fmt.Errorf("go list %s: %w", dir, err)
	}
	exports := map[string]string{}
	var target listed
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p listed
		if err := dec.Decode(&p); err != nil {
			return graph{}, fmt.Errorf("go list output: %w", err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly {
			target = p
		}
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range target.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(target.Dir, name), nil, 0)
		if err != nil {
			return graph{}, err
		}
		files = append(files, f)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := conf.Check(target.ImportPath, fset, files, info)
	if err != nil {
		return graph{}, err
	}
	return fileEdges(fset, pkg, info, target.GoFiles), nil
}

// fileEdges collects the edges between the package's files.
func fileEdges(fset *token.FileSet, pkg *types.Package, info *types.Info, names []string) graph {
	g := graph{nodes: names, edges: map[string]map[string]bool{}}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from != to {
			g.add(from, to)
		}
	}
	return g
}

func report(w io.Writer, g graph, verbose bool) {
	comps := g.sccs()
	back := g.backRefs(comps)
	fmt.Fprintf(w, "files:           %d\n", len(g.nodes))
	fmt.Fprintf(w, "edges:           %d\n", g.count())
	fmt.Fprintf(w, "back-references: %d\n", len(back))
	fmt.Fprintf(w, "layers:          %d\n", g.layers(comps))
	if verbose {
		for _, e := range back {
			fmt.Fprintf(w, "  back %s -> %s\n", e[0], e[1])
		}
	}
	for _, c := range comps {
		if len(c) > 1 {
			fmt.Fprintf(w, "cycle (%d files): %v\n", len(c), c)
		}
	}
}
