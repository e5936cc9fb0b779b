package helm

import (
	"strconv"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart"
)

// suspected is a template construct whose cost follows the data: a range
// over a computed number or a size-building call with computed arguments.
type suspected struct {
	file string
	line int
	what string
}

// suspectFuncs are what a scan looks for: calls of size functions with a
// computed argument, and ranges whose pipeline calls a number function.
type suspectFuncs struct {
	size, number map[string]bool
}

// strong are loops and sizes that follow the data; weak is tpl, which
// runs text from the values as a template.
var (
	strong = suspectFuncs{size: sizeFuncs, number: numberFuncs}
	weak   = suspectFuncs{size: map[string]bool{"tpl": true}}
)

// sizeFuncs build a value whose size follows an argument.
var sizeFuncs = map[string]bool{
	"until": true, "untilStep": true, "seq": true, "repeat": true,
	"indent": true, "nindent": true, "randAlpha": true, "randAlphaNum": true,
	"randAscii": true, "randNumeric": true, "randBytes": true,
}

// numberFuncs turn data into a number a range can loop over.
var numberFuncs = map[string]bool{
	"int": true, "int64": true, "float64": true, "atoi": true, "add": true,
	"mul": true, "max": true, "len": true, "until": true, "untilStep": true, "seq": true,
}

// suspect returns the first data-driven loop or size in c's templates
// (then its subcharts'), else the first tpl call, to name where a render
// stopped by a limit most likely spent its time. Helm's engine says
// nothing once it is killed.
func suspect(c *chart.Chart) (suspected, bool) {
	if s, ok := suspectWith(c, "", strong); ok {
		return s, true
	}
	return suspectWith(c, "", weak)
}

func suspectWith(c *chart.Chart, prefix string, fns suspectFuncs) (suspected, bool) {
	for _, f := range c.Templates {
		if s, ok := suspectIn(f.Name, string(f.Data), fns); ok {
			s.file = prefix + f.Name
			return s, true
		}
	}
	for _, d := range c.Dependencies() {
		if s, ok := suspectWith(d, prefix+"charts/"+d.Name()+"/", fns); ok {
			return s, true
		}
	}
	return suspected{}, false
}

func suspectIn(name, text string, fns suspectFuncs) (suspected, bool) {
	if !strings.Contains(text, "{{") {
		return suspected{}, false
	}
	t := parse.New(name)
	t.Mode = parse.SkipFuncCheck
	trees := map[string]*parse.Tree{}
	if _, err := t.Parse(text, "", "", trees); err != nil {
		return suspected{}, false
	}
	for _, tr := range trees {
		if n, what := fns.find(tr.Root); n != nil {
			loc, _ := tr.ErrorContext(n)
			return suspected{line: lineOf(loc), what: what}, true
		}
	}
	return suspected{}, false
}

func lineOf(loc string) int {
	parts := strings.Split(loc, ":")
	if len(parts) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(parts[1])
	return n
}

// findSuspect walks a template tree for the first suspect node.
func (fns suspectFuncs) find(n parse.Node) (parse.Node, string) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil, ""
		}
		for _, c := range n.Nodes {
			if s, what := fns.find(c); s != nil {
				return s, what
			}
		}
	case *parse.RangeNode:
		if callsAny(n.Pipe, fns.number) {
			return n, "range"
		}
		if s, what := fns.find(n.Pipe); s != nil {
			return s, what
		}
		return fns.firstOf(n.List, n.ElseList)
	case *parse.IfNode:
		return fns.firstOf(n.Pipe, n.List, n.ElseList)
	case *parse.WithNode:
		return fns.firstOf(n.Pipe, n.List, n.ElseList)
	case *parse.ActionNode:
		return fns.find(n.Pipe)
	case *parse.TemplateNode:
		return fns.find(n.Pipe)
	case *parse.PipeNode:
		return fns.pipe(n)
	}
	return nil, ""
}

func (fns suspectFuncs) firstOf(nodes ...parse.Node) (parse.Node, string) {
	for _, n := range nodes {
		if n == nil || isNilNode(n) {
			continue
		}
		if s, what := fns.find(n); s != nil {
			return s, what
		}
	}
	return nil, ""
}

func isNilNode(n parse.Node) bool {
	switch n := n.(type) {
	case *parse.ListNode:
		return n == nil
	case *parse.PipeNode:
		return n == nil
	}
	return false
}

// suspectPipe finds a size function called with a computed argument.
func (fns suspectFuncs) pipe(p *parse.PipeNode) (parse.Node, string) {
	if p == nil {
		return nil, ""
	}
	for i, cmd := range p.Cmds {
		if len(cmd.Args) == 0 {
			continue
		}
		if id, ok := cmd.Args[0].(*parse.IdentifierNode); ok && fns.size[id.Ident] {
			if i > 0 || !allLiteral(cmd.Args[1:]) {
				return cmd, id.Ident
			}
		}
		for _, a := range cmd.Args[1:] {
			if sub, ok := a.(*parse.PipeNode); ok {
				if s, what := fns.pipe(sub); s != nil {
					return s, what
				}
			}
		}
	}
	return nil, ""
}

func allLiteral(args []parse.Node) bool {
	for _, a := range args {
		switch a.(type) {
		case *parse.NumberNode, *parse.StringNode, *parse.BoolNode:
		default:
			return false
		}
	}
	return true
}

// callsAny says whether a pipeline (or one nested in it) calls one of fns.
func callsAny(p *parse.PipeNode, fns map[string]bool) bool {
	if p == nil {
		return false
	}
	for _, cmd := range p.Cmds {
		for _, a := range cmd.Args {
			switch a := a.(type) {
			case *parse.IdentifierNode:
				if fns[a.Ident] {
					return true
				}
			case *parse.PipeNode:
				if callsAny(a, fns) {
					return true
				}
			}
		}
	}
	return false
}
