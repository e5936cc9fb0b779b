package lua

import (
	"container/list"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"

	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// CacheStats counts the compiled-script cache's traffic.
type CacheStats struct {
	Hits     uint64 // lookups answered from the cache
	Compiles uint64 // scripts parsed and compiled (cache misses)
	Entries  int    // scripts held now
}

// compiled is one cache entry: the shared bytecode of a script, or why it
// did not compile. A FunctionProto is read-only once built, so many states
// may run it at once.
type compiled struct {
	key   [sha256.Size]byte
	proto *glua.FunctionProto
	line  int    // compile error line, 0 when unknown
	msg   string // compile error message; "" when proto is set
}

// protoCache is a bounded LRU of compiled scripts keyed by the SHA-256 of
// their source. It belongs to one Runner.
type protoCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recently used *compiled
	byKey map[[sha256.Size]byte]*list.Element
	hits  uint64
	comps uint64
}

func newProtoCache(max int) *protoCache {
	return &protoCache{max: max, order: list.New(), byKey: map[[sha256.Size]byte]*list.Element{}}
}

// get returns the compiled form of s, compiling it on a miss. Two goroutines
// missing on the same script at once may both compile it; the result is the same.
func (c *protoCache) get(s Script) (*glua.FunctionProto, error) {
	key := sha256.Sum256([]byte(s.Source))
	entry, ok := c.lookup(key)
	if !ok {
		entry = compile(key, s.Source)
		c.add(entry)
	}
	if entry.proto == nil {
		return nil, &ScriptError{Name: s.Name, Line: entry.line, Message: entry.msg, Err: ErrSyntax}
	}
	return entry.proto, nil
}

func (c *protoCache) lookup(key [sha256.Size]byte) (*compiled, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.hits++
	c.order.MoveToFront(el)
	return el.Value.(*compiled), true
}

func (c *protoCache) add(entry *compiled) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.comps++
	if el, ok := c.byKey[entry.key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.byKey[entry.key] = c.order.PushFront(entry)
	for c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.byKey, oldest.Value.(*compiled).key)
	}
}

func (c *protoCache) stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits, Compiles: c.comps, Entries: c.order.Len()}
}

// maxSourceLen bounds a script's source; health scripts are a few KiB.
const maxSourceLen = 1 << 20

// compile parses source, guards its string concatenations (see rewrite.go)
// and compiles it to bytecode.
func compile(key [sha256.Size]byte, source string) *compiled {
	if len(source) > maxSourceLen {
		return &compiled{key: key, msg: fmt.Sprintf("script of %s is longer than %s", formatBytes(int64(len(source))), formatBytes(maxSourceLen))}
	}
	chunk, err := parse.Parse(strings.NewReader(source), chunkName)
	if err == nil && chunk == nil {
		err = errors.New("cannot parse script")
	}
	if err != nil {
		line, msg := describeCompileError(err)
		return &compiled{key: key, line: line, msg: msg}
	}
	chunk, err = guardConcat(chunk)
	if err != nil {
		line, msg := describeCompileError(err)
		return &compiled{key: key, line: line, msg: msg}
	}
	proto, err := glua.Compile(chunk, chunkName)
	if err != nil {
		line, msg := describeCompileError(err)
		return &compiled{key: key, line: line, msg: msg}
	}
	return &compiled{key: key, proto: proto}
}

// describeCompileError renders parser and compiler errors the way Lua does:
// a line and "message near 'token'".
func describeCompileError(err error) (int, string) {
	var perr *parse.Error
	if errors.As(err, &perr) {
		if perr.Pos.Line == parse.EOF {
			return 0, perr.Message + " at end of script"
		}
		return perr.Pos.Line, fmt.Sprintf("%s near '%s'", perr.Message, perr.Token)
	}
	var cerr *glua.CompileError
	if errors.As(err, &cerr) {
		return cerr.Line, cerr.Message
	}
	return 0, err.Error()
}
