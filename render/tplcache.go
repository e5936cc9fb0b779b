package render

import (
	"fmt"
	"hash/maphash"
	"sort"
	"strconv"
	"sync"
	"text/template"

	"github.com/regatta-dev/regatta/render/tplscan"
)

// templateCache keeps parsed templates by name and text, with the data
// they read and a pool of executable instances: an instance's functions
// are bound to its own budget, so one instance runs one execution at a
// time. Parsing, analysing and instrumenting happen once per template
// text, not once per cluster.
type templateCache struct {
	funcs  template.FuncMap
	limits TemplateLimits
	lru    *lru[*compiled]
	// seed keys texts by maphash (a hit also compares the text).
	seed maphash.Seed
}

func newTemplateCache(funcs template.FuncMap, limits TemplateLimits) *templateCache {
	return &templateCache{funcs: funcs, limits: limits, lru: newLRU[*compiled](32 << 20), seed: maphash.MakeSeed()}
}

// compiled is one template text: its error (a parse error, or a literal
// bomb tplscan finds: it fails before it runs, whatever the data), or the
// sorted reads of executing it and its instances.
type compiled struct {
	key, name, text string
	err             error
	reads           []dataRead
	mu              sync.Mutex
	free            []*instance // at most maxFree
}

// maxFree bounds the idle instances kept per template.
const maxFree = 8

type instance struct {
	t *template.Template
	b *budget
}

func (c *templateCache) get(name string, text []byte) *compiled {
	key := name + "\x00" + strconv.FormatUint(maphash.Bytes(c.seed, text), 36)
	if e, ok := c.lru.get(key); ok && e.text == string(text) {
		return e
	}
	e := &compiled{key: key, name: name, text: string(text)}
	inst, err := c.parse(e)
	if err != nil {
		e.err = templateError(name, err)
	} else if e.err = c.scan(e); e.err == nil {
		e.reads = sortedReads(readsOf(inst.t))
		instrument(inst.t)
		e.put(inst)
	}
	// The cost counts the text, its trees and up to maxFree instances.
	c.lru.put(key, e, int64(8*len(text)+16<<10))
	return e
}

// scan returns the first literal bomb of e's text as a limit error.
func (c *templateCache) scan(e *compiled) error {
	found := tplscan.Scan(e.name, e.text, tplscan.Limits{MaxIterations: c.limits.MaxSteps, MaxSize: c.limits.MaxValue})
	if len(found) == 0 {
		return nil
	}
	f := found[0]
	te := &TemplateError{Template: e.name, Line: f.Line, Err: fmt.Errorf("%w: %s", ErrTemplateLimit, f.Msg)}
	return &Error{File: e.name, Line: f.Line, Err: te}
}

func (c *templateCache) parse(e *compiled) (*instance, error) {
	b := &budget{}
	t, err := template.New(e.name).Funcs(boundedFuncs(c.funcs, b)).Option("missingkey=error").Parse(e.text)
	if err != nil {
		return nil, err
	}
	return &instance{t: t, b: b}, nil
}

// get returns an instance for one execution; put gives it back.
func (e *compiled) get(c *templateCache) *instance {
	e.mu.Lock()
	if n := len(e.free); n > 0 {
		inst := e.free[n-1]
		e.free = e.free[:n-1]
		e.mu.Unlock()
		return inst
	}
	e.mu.Unlock()
	inst, err := c.parse(e)
	if err != nil { // parsed before: cannot happen
		panic(err)
	}
	instrument(inst.t)
	return inst
}

func (e *compiled) put(inst *instance) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.free) < maxFree {
		e.free = append(e.free, inst)
	}
}

func sortedReads(m map[string]dataRead) []dataRead {
	out := make([]dataRead, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
