package render

import (
	"sort"
	"sync"
	"text/template"
)

// templateCache keeps parsed templates by name and text, with the data
// they read and a pool of executable instances: an instance's functions
// are bound to its own budget, so one instance runs one execution at a
// time. Parsing, analysing and instrumenting happen once per template
// text, not once per cluster.
type templateCache struct {
	funcs template.FuncMap
	lru   *lru[*compiled]
}

func newTemplateCache(funcs template.FuncMap) *templateCache {
	return &templateCache{funcs: funcs, lru: newLRU[*compiled](32 << 20)}
}

// compiled is one template text: its parse error, or the sorted reads of
// executing it and its instances.
type compiled struct {
	name, text string
	err        error
	reads      []dataRead
	pool       sync.Pool
}

type instance struct {
	t *template.Template
	b *budget
}

func (c *templateCache) get(name string, text []byte) *compiled {
	key := hashStrings(name, string(text))
	if e, ok := c.lru.get(key); ok {
		return e
	}
	e := &compiled{name: name, text: string(text)}
	inst, err := c.parse(e)
	if err != nil {
		e.err = err
	} else {
		e.reads = sortedReads(readsOf(inst.t))
		instrument(inst.t)
		e.pool.Put(inst)
	}
	c.lru.put(key, e, int64(8*len(text)+4096))
	return e
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
	if v := e.pool.Get(); v != nil {
		return v.(*instance)
	}
	inst, err := c.parse(e)
	if err != nil { // parsed before: cannot happen
		panic(err)
	}
	instrument(inst.t)
	return inst
}

func (e *compiled) put(inst *instance) { e.pool.Put(inst) }

func sortedReads(m map[string]dataRead) []dataRead {
	out := make([]dataRead, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
