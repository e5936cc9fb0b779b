package render

import (
	"strconv"
	"text/template"
	"text/template/parse"
)

// instrument puts a call of tickFunc at the start of every list of
// actions of every template in t (the root, each branch and loop body,
// each defined template), charging the list's length. Every loop
// iteration, branch and template call then costs at least one step, so an
// empty loop over 10^14 stops at MaxSteps like any other. The call sits
// at the list's position, so an error names the loop's line.
func instrument(t *template.Template) {
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			instrumentList(tt.Tree.Root)
		}
	}
}

func instrumentList(l *parse.ListNode) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		instrumentNode(n)
	}
	tick := tickNode(l.Pos, len(l.Nodes)+1)
	l.Nodes = append([]parse.Node{tick}, l.Nodes...)
}

func instrumentNode(n parse.Node) {
	switch n := n.(type) {
	case *parse.IfNode:
		instrumentList(n.List)
		instrumentList(n.ElseList)
	case *parse.RangeNode:
		instrumentList(n.List)
		instrumentList(n.ElseList)
	case *parse.WithNode:
		instrumentList(n.List)
		instrumentList(n.ElseList)
	case *parse.ListNode:
		instrumentList(n)
	}
}

// tickNode is the action {{ regattaTick cost }} at pos.
func tickNode(pos parse.Pos, cost int) *parse.ActionNode {
	num := &parse.NumberNode{
		NodeType: parse.NodeNumber,
		Pos:      pos,
		IsInt:    true,
		Int64:    int64(cost),
		Text:     strconv.Itoa(cost),
	}
	id := &parse.IdentifierNode{NodeType: parse.NodeIdentifier, Pos: pos, Ident: tickFunc}
	cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{id, num}}
	pipe := &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Cmds: []*parse.CommandNode{cmd}}
	return &parse.ActionNode{NodeType: parse.NodeAction, Pos: pos, Pipe: pipe}
}
