// Package tplscan finds template bombs written as literals: a loop, or a
// function whose output size follows an argument, that passes a limit
// whatever the data. It looks at the parse tree only, so it works where
// the template cannot be bounded while it runs (Helm's chart templates)
// and where no data is at hand (regatta validate). Data-dependent sizes
// are out of its reach: they are bounded at execution, where that is
// possible.
package tplscan

import (
	"fmt"
	"strconv"
	"strings"
	"text/template/parse"
)

// Limits are what a finding passes.
type Limits struct {
	// MaxIterations bounds the iterations of nested literal loops.
	MaxIterations int64
	// MaxSize bounds the bytes (or elements) one call builds, and the
	// bytes nested loops repeat a call's output.
	MaxSize int64
}

// Finding is a literal bomb at a line of the template.
type Finding struct {
	Line int
	Msg  string
}

func (f Finding) String() string { return fmt.Sprintf("line %d: %s", f.Line, f.Msg) }

// Scan parses text (delimiters {{ }}; any function name is accepted) and
// returns its literal bombs. A parse error returns no findings: reporting
// it is the template engine's business.
func Scan(name, text string, lim Limits) []Finding {
	if !strings.Contains(text, "{{") {
		return nil
	}
	t := parse.New(name)
	t.Mode = parse.SkipFuncCheck
	trees := map[string]*parse.Tree{}
	if _, err := t.Parse(text, "", "", trees); err != nil {
		return nil
	}
	s := &scanner{lim: lim}
	for _, tr := range trees {
		s.tree = tr
		s.list(tr.Root, 1)
	}
	return s.found
}

type scanner struct {
	lim   Limits
	tree  *parse.Tree
	found []Finding
}

func (s *scanner) report(n parse.Node, format string, args ...any) {
	loc, _ := s.tree.ErrorContext(n)
	line := 0
	if parts := strings.Split(loc, ":"); len(parts) >= 2 {
		line, _ = strconv.Atoi(parts[1])
	}
	s.found = append(s.found, Finding{Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (s *scanner) list(l *parse.ListNode, mult int64) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		s.node(n, mult)
	}
}

func (s *scanner) node(n parse.Node, mult int64) {
	switch n := n.(type) {
	case *parse.ActionNode:
		s.pipe(n.Pipe, mult)
	case *parse.IfNode:
		s.branch(&n.BranchNode, mult)
	case *parse.WithNode:
		s.branch(&n.BranchNode, mult)
	case *parse.RangeNode:
		s.pipe(n.Pipe, mult)
		inner := mult
		if c, ok := rangeCount(n.Pipe); ok {
			inner = mul(mult, c)
			if inner > s.lim.MaxIterations || inner < 0 {
				s.report(n, "range of %s iterations (with the loops around it): the limit is %d", count(inner), s.lim.MaxIterations)
				return
			}
		}
		s.list(n.List, inner)
		s.list(n.ElseList, mult)
	case *parse.TemplateNode:
		s.pipe(n.Pipe, mult)
	}
}

func (s *scanner) branch(b *parse.BranchNode, mult int64) {
	s.pipe(b.Pipe, mult)
	s.list(b.List, mult)
	s.list(b.ElseList, mult)
}

func (s *scanner) pipe(p *parse.PipeNode, mult int64) {
	if p == nil {
		return
	}
	for _, c := range p.Cmds {
		s.command(c, mult)
	}
}

func (s *scanner) command(c *parse.CommandNode, mult int64) {
	for _, a := range c.Args {
		if p, ok := a.(*parse.PipeNode); ok {
			s.pipe(p, mult)
		}
	}
	id, ok := c.Args[0].(*parse.IdentifierNode)
	if !ok {
		return
	}
	size, ok := callSize(id.Ident, c.Args[1:])
	if !ok {
		return
	}
	switch {
	case size > s.lim.MaxSize || size < 0:
		s.report(c, "%s would build %s bytes: the limit is %d", id.Ident, count(size), s.lim.MaxSize)
	case mul(size, mult) > 4*s.lim.MaxSize || mul(size, mult) < 0:
		s.report(c, "%s in loops of %s iterations would write %s bytes: the limit is %d", id.Ident, count(mult), count(mul(size, mult)), 4*s.lim.MaxSize)
	}
}

// rangeCount is the iterations of range N, range until N, range
// untilStep A B S and range seq ... with literal numbers.
func rangeCount(p *parse.PipeNode) (int64, bool) {
	if p == nil || len(p.Cmds) != 1 {
		return 0, false
	}
	args := p.Cmds[0].Args
	if len(args) == 1 {
		return literalInt(args[0])
	}
	id, ok := args[0].(*parse.IdentifierNode)
	if !ok {
		return 0, false
	}
	n, ok := callSize(id.Ident, args[1:])
	switch id.Ident {
	case "until", "untilStep":
		return n / 8, ok
	}
	return 0, false
}

// callSize estimates what a call with literal arguments builds.
func callSize(name string, args []parse.Node) (int64, bool) {
	ints := make([]int64, 0, len(args))
	for _, a := range args {
		if n, ok := literalInt(a); ok {
			ints = append(ints, n)
		}
	}
	switch name {
	case "repeat", "indent", "nindent", "randAlpha", "randAlphaNum", "randAscii", "randNumeric", "randBytes":
		if len(ints) == 0 {
			return 0, false
		}
		return mul(ints[0], int64(max(1, literalLen(args[len(args)-1])))), true
	case "until":
		if len(ints) == 1 && len(args) == 1 {
			return mul(ints[0], 8), true
		}
	case "untilStep":
		if len(ints) == 3 && ints[2] != 0 {
			return mul(max(0, (ints[1]-ints[0])/ints[2]), 8), true
		}
	case "seq":
		if len(ints) == len(args) && len(ints) > 0 {
			return mul(max(0, ints[len(ints)-1]-ints[0]), 8), true
		}
	}
	return 0, false
}

func literalInt(n parse.Node) (int64, bool) {
	num, ok := n.(*parse.NumberNode)
	if !ok || !num.IsInt {
		return 0, false
	}
	return num.Int64, true
}

func literalLen(n parse.Node) int {
	if s, ok := n.(*parse.StringNode); ok {
		return len(s.Text)
	}
	return 1
}

func mul(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	if a != 0 && b > (1<<62)/a {
		return -1
	}
	return a * b
}

func count(n int64) string {
	if n < 0 {
		return "more than 4.6e18"
	}
	return strconv.FormatInt(n, 10)
}
