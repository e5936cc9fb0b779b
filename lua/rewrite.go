package lua

import (
	"fmt"

	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// concatGlobal hands the Go function that replaces Lua's ".." operator to
// the chunk, which keeps it in the local concatLocal. Neither is a valid Lua
// identifier, so no script can name, shadow or reassign them.
const (
	concatGlobal = " concat"
	concatLocal  = " concat local"
)

// maxSyntaxDepth bounds how deeply blocks and expressions may nest. Lua 5.1
// stops at about 200 ("chunk has too many syntax levels"); gopher-lua does
// not, and compiles recursively, so a script of a million parentheses would
// take hundreds of MiB of stack (and more would crash the process).
const maxSyntaxDepth = 1000

// rewriter walks a chunk, replacing concatenations and measuring depth.
type rewriter struct {
	depth    int
	tooDeep  bool
	deepLine int
}

// guardConcat rewrites every `a .. b` in chunk into a call of the guarded
// concatenation (limits.go), which refuses to build strings longer than
// Options.MaxStringLen. Lua's CONCAT opcode cannot be limited otherwise, and
// `s = s .. s` doubles memory per instruction. The rewritten chunk starts
// with `local <concatLocal> = <concatGlobal>; <concatGlobal> = nil`, so the
// function is captured before any script code runs and is gone from the
// globals afterwards. It fails when the chunk nests deeper than
// maxSyntaxDepth.
func guardConcat(chunk []ast.Stmt) ([]ast.Stmt, error) {
	rw := &rewriter{}
	rw.stmts(chunk)
	if rw.tooDeep {
		return nil, &glua.CompileError{Line: rw.deepLine, Message: fmt.Sprintf("blocks and expressions nest deeper than %d levels", maxSyntaxDepth)}
	}
	capture := &ast.LocalAssignStmt{
		Names: []string{concatLocal},
		Exprs: []ast.Expr{&ast.IdentExpr{Value: concatGlobal}},
	}
	clear := &ast.AssignStmt{
		Lhs: []ast.Expr{&ast.IdentExpr{Value: concatGlobal}},
		Rhs: []ast.Expr{&ast.NilExpr{}},
	}
	return append([]ast.Stmt{capture, clear}, chunk...), nil
}

// enter counts one level of nesting at a node; false means too deep.
func (rw *rewriter) enter(n ast.PositionHolder) bool {
	rw.depth++
	if rw.depth > maxSyntaxDepth && !rw.tooDeep {
		rw.tooDeep, rw.deepLine = true, n.Line()
	}
	return !rw.tooDeep
}

func (rw *rewriter) leave() { rw.depth-- }

func (rw *rewriter) stmts(list []ast.Stmt) {
	for _, s := range list {
		if rw.enter(s) {
			rw.stmt(s)
		}
		rw.leave()
	}
}

func (rw *rewriter) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		rw.exprs(s.Lhs)
		rw.exprs(s.Rhs)
	case *ast.LocalAssignStmt:
		rw.exprs(s.Exprs)
	case *ast.FuncCallStmt:
		s.Expr = rw.expr(s.Expr)
	case *ast.DoBlockStmt:
		rw.stmts(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = rw.expr(s.Condition)
		rw.stmts(s.Stmts)
	case *ast.RepeatStmt:
		s.Condition = rw.expr(s.Condition)
		rw.stmts(s.Stmts)
	case *ast.IfStmt:
		s.Condition = rw.expr(s.Condition)
		rw.stmts(s.Then)
		rw.stmts(s.Else)
	case *ast.NumberForStmt:
		s.Init, s.Limit, s.Step = rw.expr(s.Init), rw.expr(s.Limit), rw.expr(s.Step)
		rw.stmts(s.Stmts)
	case *ast.GenericForStmt:
		rw.exprs(s.Exprs)
		rw.stmts(s.Stmts)
	case *ast.FuncDefStmt:
		s.Name.Func, s.Name.Receiver = rw.expr(s.Name.Func), rw.expr(s.Name.Receiver)
		rw.stmts(s.Func.Stmts)
	case *ast.ReturnStmt:
		rw.exprs(s.Exprs)
	}
}

func (rw *rewriter) exprs(list []ast.Expr) {
	for i := range list {
		list[i] = rw.expr(list[i])
	}
}

// expr returns e with its concatenations replaced; nil stays nil.
func (rw *rewriter) expr(e ast.Expr) ast.Expr {
	if e == nil {
		return nil
	}
	defer rw.leave()
	if !rw.enter(e) {
		return e
	}
	switch e := e.(type) {
	case *ast.StringConcatOpExpr:
		return rw.concatCall(e)
	case *ast.AttrGetExpr:
		e.Object, e.Key = rw.expr(e.Object), rw.expr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			f.Key, f.Value = rw.expr(f.Key), rw.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		e.Func, e.Receiver = rw.expr(e.Func), rw.expr(e.Receiver)
		rw.exprs(e.Args)
	case *ast.LogicalOpExpr:
		e.Lhs, e.Rhs = rw.expr(e.Lhs), rw.expr(e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs, e.Rhs = rw.expr(e.Lhs), rw.expr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs, e.Rhs = rw.expr(e.Lhs), rw.expr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		e.Expr = rw.expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		e.Expr = rw.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = rw.expr(e.Expr)
	case *ast.FunctionExpr:
		rw.stmts(e.Stmts)
	}
	return e
}

// oneValue makes a call or `...` give exactly one value, as `(f())` does.
// An operand of ".." is one value in Lua; as the last argument of the
// rewritten call it would otherwise pass all its values through, or none.
func oneValue(e ast.Expr) {
	switch e := e.(type) {
	case *ast.FuncCallExpr:
		e.AdjustRet = true
	case *ast.Comma3Expr:
		e.AdjustRet = true
	}
}

// concatCall turns the chain `a .. b .. c` (right-nested in the AST) into
// `<concatLocal>(a, b, c)`, one call with one register per operand as Lua's
// own CONCAT, at the position of the chain, so errors keep pointing at the
// script's own line.
func (rw *rewriter) concatCall(chain *ast.StringConcatOpExpr) ast.Expr {
	var args []ast.Expr
	e := ast.Expr(chain)
	for {
		link, ok := e.(*ast.StringConcatOpExpr)
		if !ok {
			break
		}
		args = append(args, rw.expr(link.Lhs))
		e = link.Rhs
	}
	args = append(args, rw.expr(e))
	oneValue(args[len(args)-1])
	fn := &ast.IdentExpr{Value: concatLocal}
	call := &ast.FuncCallExpr{Func: fn, Args: args}
	for _, n := range []ast.PositionHolder{fn, call} {
		n.SetLine(chain.Line())
		n.SetLastLine(chain.LastLine())
	}
	return call
}
