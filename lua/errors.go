package lua

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// Categories of ScriptError; test them with errors.Is. A script that runs past
// its deadline or is canceled wraps context.DeadlineExceeded or
// context.Canceled instead.
var (
	// ErrSyntax: the script does not compile.
	ErrSyntax = errors.New("syntax error")
	// ErrRuntime: the script raised an error while running.
	ErrRuntime = errors.New("runtime error")
	// ErrInvalidResult: the script ran but returned something unusable.
	ErrInvalidResult = errors.New("invalid result")
	// ErrMemoryLimit: the script allocated more than Options.MemoryLimit or
	// tried to build a string longer than Options.MaxStringLen.
	ErrMemoryLimit = errors.New("memory limit exceeded")
	// ErrInstructionLimit: the script ran more than Options.MaxInstructions steps.
	ErrInstructionLimit = errors.New("instruction limit exceeded")
)

// ScriptError is a failure of one script, placed at its name and line:
// "profiles/x.yaml spec.healthChecks[0].script:3: attempt to index ...".
type ScriptError struct {
	Name    string // the caller's name for the script (file or profile field)
	Line    int    // 1-based Lua line, 0 when unknown
	Message string // the message without position or stack trace
	Err     error  // the category: ErrSyntax, ErrRuntime, ... or a context error
}

// Error formats "name:line: message".
func (e *ScriptError) Error() string {
	var b strings.Builder
	b.WriteString(e.Name)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	return b.String()
}

// Unwrap returns the category, so errors.Is(err, ErrSyntax) and
// errors.Is(err, context.DeadlineExceeded) work.
func (e *ScriptError) Unwrap() error { return e.Err }

// chunkName is the source name scripts are compiled under. Compiled code is
// shared between callers that name a script differently, so positions are
// rewritten to the caller's name when an error leaves the package.
const chunkName = "\x01script"

// nonTable matches gopher-lua's "attempt to index a non-table object(nil)",
// which reads better as Lua's own "attempt to index a nil value".
var nonTable = regexp.MustCompile(`a non-table object\((\w+)\)`)

// newScriptError turns a raw Lua message ("\x01script:3: boom") into a
// ScriptError named name.
func newScriptError(name, raw string, category error) *ScriptError {
	line, msg := splitPosition(raw)
	msg = strings.ReplaceAll(msg, chunkName+":", name+":")
	msg = nonTable.ReplaceAllString(msg, "a $1 value")
	return &ScriptError{Name: name, Line: line, Message: msg, Err: category}
}

// splitPosition separates a leading "\x01script:N: " from a message.
func splitPosition(raw string) (int, string) {
	rest, ok := strings.CutPrefix(raw, chunkName+":")
	if !ok {
		return 0, raw
	}
	num, msg, ok := strings.Cut(rest, ":")
	line, err := strconv.Atoi(num)
	if !ok || err != nil {
		return 0, raw
	}
	return line, strings.TrimPrefix(msg, " ")
}
