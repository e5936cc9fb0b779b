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
// (then its subcharts'), to name where a render stopped by a limit most
// likely spent its time. Helm's engine says nothing once it is killed.
func suspect(c *chart.Chart, prefix string) (suspected, bool) {
	for _, f := range c.Templates {
		if s, ok := suspectIn(f.Name, string(f.Data)); ok {
			s.file = prefix + f.Name
			return s, true
		}
	}
	for _, d := range c.Dependencies() {
		if s, ok := suspect(d, prefix+"charts/"+d.Name()+"/"); ok {
			return s, true
		}
	}
	return suspected{}, false
}

func suspectIn(name, text string) (suspected, bool) {
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
		if n, what := findSuspect(tr.Root); n != nil {
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
func findSuspect(n parse.Node) (parse.Node, string) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil, ""
		}
		for _, c := range n.Nodes {
			if s, what := findSuspect(c); s != nil {
				return s, what
			}
		}
	case *parse.RangeNode:
		if callsAny(n.Pipe, numberFuncs) {
			return n, "range"
		}
		if s, what := findSuspect(n.Pipe); s != nil {
			return s, what
		}
		return firstOf(n.List, n.ElseList)
	case *parse.IfNode:
		return firstOf(n.Pipe, n.List, n.ElseList)
	case *parse.WithNode:
		return firstOf(n.Pipe, n.List, n.ElseList)
	case *parse.ActionNode:
		return findSuspect(n.Pipe)
	case *parse.TemplateNode:
		return findSuspect(n.Pipe)
	case *parse.PipeNode:
		return suspectPipe(n)
	}
	return nil, ""
}

func firstOf(nodes ...parse.Node) (parse.Node, string) {
	for _, n := range nodes {
		if n == nil || isNilNode(n) {
			continue
		}
		if s, what := findSuspect(n); s != nil {
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
func suspectPipe(p *parse.PipeNode) (parse.Node, string) {
	if p == nil {
		return nil, ""
	}
	for i, cmd := range p.Cmds {
		if len(cmd.Args) == 0 {
			continue
		}
		if id, ok := cmd.Args[0].(*parse.IdentifierNode); ok && sizeFuncs[id.Ident] {
			if i > 0 || !allLiteral(cmd.Args[1:]) {
				return cmd, id.Ident
			}
		}
		for _, a := range cmd.Args[1:] {
			if sub, ok := a.(*parse.PipeNode); ok {
				if s, what := suspectPipe(sub); s != nil {
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
