package lua

import (
	"github.com/yuin/gopher-lua/ast"
)

// concatGlobal hands the Go function that replaces Lua's ".." operator to
// the chunk, which keeps it in the local concatLocal. Neither is a valid Lua
// identifier, so no script can name, shadow or reassign them.
const (
	concatGlobal = " concat"
	concatLocal  = " concat local"
)

// guardConcat rewrites every `a .. b` in chunk into a call of the guarded
// concatenation (limits.go), which refuses to build strings longer than
// Options.MaxStringLen. Lua's CONCAT opcode cannot be limited otherwise, and
// `s = s .. s` doubles memory per instruction. The rewritten chunk starts
// with `local <concatLocal> = <concatGlobal>; <concatGlobal> = nil`, so the
// function is captured before any script code runs and is gone from the
// globals afterwards.
func guardConcat(chunk []ast.Stmt) []ast.Stmt {
	capture := &ast.LocalAssignStmt{
		Names: []string{concatLocal},
		Exprs: []ast.Expr{&ast.IdentExpr{Value: concatGlobal}},
	}
	clear := &ast.AssignStmt{
		Lhs: []ast.Expr{&ast.IdentExpr{Value: concatGlobal}},
		Rhs: []ast.Expr{&ast.NilExpr{}},
	}
	stmts(chunk)
	return append([]ast.Stmt{capture, clear}, chunk...)
}

func stmts(list []ast.Stmt) {
	for _, s := range list {
		stmt(s)
	}
}

func stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		exprs(s.Lhs)
		exprs(s.Rhs)
	case *ast.LocalAssignStmt:
		exprs(s.Exprs)
	case *ast.FuncCallStmt:
		s.Expr = expr(s.Expr)
	case *ast.DoBlockStmt:
		stmts(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = expr(s.Condition)
		stmts(s.Stmts)
	case *ast.RepeatStmt:
		s.Condition = expr(s.Condition)
		stmts(s.Stmts)
	case *ast.IfStmt:
		s.Condition = expr(s.Condition)
		stmts(s.Then)
		stmts(s.Else)
	case *ast.NumberForStmt:
		s.Init, s.Limit, s.Step = expr(s.Init), expr(s.Limit), expr(s.Step)
		stmts(s.Stmts)
	case *ast.GenericForStmt:
		exprs(s.Exprs)
		stmts(s.Stmts)
	case *ast.FuncDefStmt:
		s.Name.Func, s.Name.Receiver = expr(s.Name.Func), expr(s.Name.Receiver)
		stmts(s.Func.Stmts)
	case *ast.ReturnStmt:
		exprs(s.Exprs)
	}
}

func exprs(list []ast.Expr) {
	for i := range list {
		list[i] = expr(list[i])
	}
}

// expr returns e with its concatenations replaced; nil stays nil.
func expr(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.StringConcatOpExpr:
		return concatCall(expr(e.Lhs), expr(e.Rhs), e)
	case *ast.AttrGetExpr:
		e.Object, e.Key = expr(e.Object), expr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			f.Key, f.Value = expr(f.Key), expr(f.Value)
		}
	case *ast.FuncCallExpr:
		e.Func, e.Receiver = expr(e.Func), expr(e.Receiver)
		exprs(e.Args)
	case *ast.LogicalOpExpr:
		e.Lhs, e.Rhs = expr(e.Lhs), expr(e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs, e.Rhs = expr(e.Lhs), expr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs, e.Rhs = expr(e.Lhs), expr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		e.Expr = expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		e.Expr = expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = expr(e.Expr)
	case *ast.FunctionExpr:
		stmts(e.Stmts)
	}
	return e
}

// concatCall builds `<concatLocal>(lhs, rhs)` at the position of orig, so
// errors keep pointing at the script's own line.
func concatCall(lhs, rhs ast.Expr, orig ast.Expr) ast.Expr {
	fn := &ast.IdentExpr{Value: concatLocal}
	call := &ast.FuncCallExpr{Func: fn, Args: []ast.Expr{lhs, rhs}}
	for _, n := range []ast.PositionHolder{fn, call} {
		n.SetLine(orig.Line())
		n.SetLastLine(orig.LastLine())
	}
	return call
}
