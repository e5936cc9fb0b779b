package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// Which template data a template reads
//
// readsOf walks a template's parse tree and returns the data paths its
// execution may read, over-approximated: every branch counts, whatever
// the data. A value is followed through fields (.Cluster.Labels.env),
// index with constant keys, with (which reads the value's truth, then
// fields of it), variables and template calls. Anything else a value
// meets reads all of it: printed, compared, ranged over, passed to a
// function (toYaml .Cluster reads the whole cluster), assigned with =.
// Two clusters whose data agree on every read path execute the template
// identically, which is what lets them share a render.

// dataRead is one read: the value at Path (all of it), or only its truth
// (empty or not) when Truth is set.
type dataRead struct {
	Truth bool
	Path  []string
}

func (r dataRead) String() string {
	k := "v"
	if r.Truth {
		k = "t"
	}
	return k + ":" + strings.Join(r.Path, "\x1f")
}

// aval is the abstract value of an expression: a data path when ok, or
// a value that is not template data (or whose data is read already).
type aval struct {
	ok   bool
	path []string
}

func (v aval) field(names ...string) aval {
	if !v.ok {
		return v
	}
	return aval{ok: true, path: append(slices.Clip(v.path), names...)}
}

type avar struct {
	name string
	val  aval
}

type readAnalysis struct {
	tmpl  *template.Template
	reads map[string]dataRead
	vars  []avar
	depth int
}

// maxCallDepth bounds how deep template calls are followed; deeper, the
// call's argument counts as read whole.
const maxCallDepth = 16

// readsOf returns the reads of executing t (its own tree).
func readsOf(t *template.Template) map[string]dataRead {
	a := &readAnalysis{tmpl: t, reads: map[string]dataRead{}}
	root := aval{ok: true}
	a.vars = []avar{{name: "$", val: root}}
	if t.Tree != nil {
		a.list(root, t.Tree.Root)
	}
	return a.reads
}

func (a *readAnalysis) use(v aval) {
	if v.ok {
		r := dataRead{Path: v.path}
		a.reads[r.String()] = r
	}
}

func (a *readAnalysis) truth(v aval) {
	if v.ok {
		r := dataRead{Truth: true, Path: v.path}
		a.reads[r.String()] = r
	}
}

func (a *readAnalysis) list(dot aval, l *parse.ListNode) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		a.node(dot, n)
	}
}

func (a *readAnalysis) node(dot aval, n parse.Node) {
	switch n := n.(type) {
	case *parse.ActionNode:
		v := a.pipe(dot, n.Pipe, false)
		if len(n.Pipe.Decl) == 0 {
			a.use(v)
		}
	case *parse.IfNode:
		a.branch(dot, &n.BranchNode, false)
	case *parse.WithNode:
		a.branch(dot, &n.BranchNode, true)
	case *parse.RangeNode:
		mark := len(a.vars)
		a.use(a.pipe(dot, n.Pipe, true))
		a.list(aval{}, n.List)
		a.vars = a.vars[:mark]
		a.list(dot, n.ElseList)
	case *parse.TemplateNode:
		a.call(dot, n)
	case *parse.ListNode:
		a.list(dot, n)
	}
}

// branch is if (withDot false) or with: the pipeline's truth decides,
// and with sets dot to its value.
func (a *readAnalysis) branch(dot aval, b *parse.BranchNode, withDot bool) {
	mark := len(a.vars)
	v := a.pipe(dot, b.Pipe, false)
	a.truth(v)
	inner := dot
	if withDot {
		inner = v
	}
	a.list(inner, b.List)
	a.list(dot, b.ElseList)
	a.vars = a.vars[:mark]
}

// call follows {{ template "name" pipeline }} into the named template,
// whose dot and $ are the pipeline's value.
func (a *readAnalysis) call(dot aval, n *parse.TemplateNode) {
	arg := aval{}
	if n.Pipe != nil {
		arg = a.pipe(dot, n.Pipe, false)
	}
	t := a.tmpl.Lookup(n.Name)
	if t == nil || t.Tree == nil {
		return // an execution error, whatever the data
	}
	if a.depth >= maxCallDepth {
		a.use(arg)
		return
	}
	saved := a.vars
	a.vars = []avar{{name: "$", val: arg}}
	a.depth++
	a.list(arg, t.Tree.Root)
	a.depth--
	a.vars = saved
}

// pipe evaluates a pipeline. In a range (rangeVars), declared variables
// are the elements, not data paths.
func (a *readAnalysis) pipe(dot aval, p *parse.PipeNode, rangeVars bool) aval {
	if p == nil {
		return aval{}
	}
	var v aval
	for i, c := range p.Cmds {
		v = a.command(dot, c, v, i > 0)
	}
	for _, d := range p.Decl {
		name := d.Ident[0]
		switch {
		case p.IsAssign:
			a.use(a.lookup(name))
			a.use(v)
			a.set(name, aval{})
		case rangeVars:
			a.vars = append(a.vars, avar{name: name})
		default:
			a.vars = append(a.vars, avar{name: name, val: v})
		}
	}
	return v
}

// command evaluates one command of a pipeline; final is the previous
// command's value when hasFinal.
func (a *readAnalysis) command(dot aval, c *parse.CommandNode, final aval, hasFinal bool) aval {
	if id, ok := c.Args[0].(*parse.IdentifierNode); ok {
		args := make([]aval, 0, len(c.Args))
		for _, n := range c.Args[1:] {
			args = append(args, a.arg(dot, n))
		}
		if (id.Ident == "index" || id.Ident == "dig") && !hasFinal {
			if v, ok := constPath(id.Ident, args, c.Args[1:]); ok {
				return v
			}
		}
		if hasFinal {
			args = append(args, final)
		}
		for _, v := range args {
			a.use(v)
		}
		return aval{}
	}
	v := a.arg(dot, c.Args[0])
	if len(c.Args) == 1 && !hasFinal {
		return v
	}
	a.use(v) // a method call with arguments: not on template data
	for _, n := range c.Args[1:] {
		a.use(a.arg(dot, n))
	}
	a.use(final)
	return aval{}
}

// constPath is index X "k1" "k2" on a data path X: the path X.k1.k2.
// dig "k1" "k2" DEFAULT X reads the same path (and returns DEFAULT, a
// constant, when it is missing).
func constPath(fn string, args []aval, nodes []parse.Node) (aval, bool) {
	if len(args) < 2 {
		return aval{}, false
	}
	coll, keyNodes := args[0], nodes[1:]
	if fn == "dig" {
		if len(args) < 3 || !isConstant(nodes[len(nodes)-2]) {
			return aval{}, false
		}
		coll, keyNodes = args[len(args)-1], nodes[:len(nodes)-2]
	}
	if !coll.ok {
		return aval{}, false
	}
	keys := make([]string, 0, len(keyNodes))
	for _, n := range keyNodes {
		s, ok := n.(*parse.StringNode)
		if !ok {
			return aval{}, false
		}
		keys = append(keys, s.Text)
	}
	return coll.field(keys...), true
}

func isConstant(n parse.Node) bool {
	switch n.(type) {
	case *parse.StringNode, *parse.NumberNode, *parse.BoolNode, *parse.NilNode:
		return true
	}
	return false
}

func (a *readAnalysis) arg(dot aval, n parse.Node) aval {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot
	case *parse.FieldNode:
		return dot.field(n.Ident...)
	case *parse.VariableNode:
		return a.lookup(n.Ident[0]).field(n.Ident[1:]...)
	case *parse.ChainNode:
		return a.arg(dot, n.Node).field(n.Field...)
	case *parse.PipeNode:
		return a.pipe(dot, n, false)
	case *parse.IdentifierNode:
		return aval{} // a function called without arguments
	}
	return aval{} // a constant
}

func (a *readAnalysis) lookup(name string) aval {
	for i := len(a.vars) - 1; i >= 0; i-- {
		if a.vars[i].name == name {
			return a.vars[i].val
		}
	}
	return aval{}
}

func (a *readAnalysis) set(name string, v aval) {
	for i := len(a.vars) - 1; i >= 0; i-- {
		if a.vars[i].name == name {
			a.vars[i].val = v
			return
		}
	}
}

// lookupRead returns what read r sees in data, as text: the JSON of the
// value (or its truth), "absent" for a missing key, or, where the path
// runs into a value that is not a map, that value and the depth.
func lookupRead(data templateData, r dataRead) string {
	cur, depth, ok := dataField(data, r.Path)
	if !ok {
		return fmt.Sprintf("absent@%d", depth)
	}
	for i := depth; i < len(r.Path); i++ {
		k := r.Path[i]
		switch m := cur.(type) {
		case map[string]any:
			cur, ok = m[k]
		case map[string]string:
			cur, ok = m[k]
		default:
			return fmt.Sprintf("stop@%d:%s", i, jsonText(cur))
		}
		if !ok {
			return fmt.Sprintf("absent@%d", i)
		}
	}
	if r.Truth {
		t, _ := template.IsTrue(cur)
		return strconv.FormatBool(t)
	}
	return jsonText(cur)
}

// dataField follows the struct part of a path (.Cluster.Labels): it
// returns the value reached and how many elements it used, or ok false
// for a field that does not exist.
func dataField(data templateData, path []string) (any, int, bool) {
	if len(path) == 0 {
		return data, 0, true
	}
	switch path[0] {
	case "Revision":
		return data.Revision, 1, true
	case "Event":
		return eventField(data.Event, path)
	case "Profile":
		if len(path) == 1 {
			return data.Profile, 1, true
		}
		return data.Profile.Name, 2, path[1] == "Name"
	case "Cluster":
		if len(path) == 1 {
			return data.Cluster, 1, true
		}
		c := data.Cluster
		switch path[1] {
		case "Name":
			return c.Name, 2, true
		case "Labels":
			return c.Labels, 2, true
		case "Values":
			return c.Values, 2, true
		case "KubernetesVersion":
			return c.KubernetesVersion, 2, true
		}
		return nil, 1, false
	}
	return nil, 0, false
}

func jsonText(v any) string {
	js, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(js)
}
