package lua

import (
	"time"
)

// Options bound what one script call may do. Zero fields take the value of
// DefaultOptions.
type Options struct {
	// Timeout is the deadline of one call, counted from its start. A shorter
	// deadline on the caller's context wins. Default 1s.
	Timeout time.Duration
	// CacheSize is how many compiled scripts the Runner keeps. Default 256.
	CacheSize int
	// MemoryLimit is how many bytes the Go heap may allocate while one call
	// runs (see the package documentation for how it is measured). Default 256 MiB.
	MemoryLimit int64
	// MaxStringLen is the longest string a script may build. Default 4 MiB.
	MaxStringLen int
	// MaxInstructions bounds the VM instructions plus pattern-matching steps
	// of one call; 0 means only the deadline bounds them. Default 0.
	MaxInstructions int64
	// CallStackSize is the deepest Lua call nesting. Default 200.
	CallStackSize int
	// RegistryMaxSize is the most values the Lua data stack may hold (all
	// frames' registers, unpack and string.byte results). Default 1<<16; Lua
	// 5.1 itself allows unpack about 8000 results.
	RegistryMaxSize int
}

// DefaultOptions returns the options a zero Options stands for.
func DefaultOptions() Options {
	return Options{
		Timeout:         time.Second,
		CacheSize:       256,
		MemoryLimit:     256 << 20,
		MaxStringLen:    4 << 20,
		CallStackSize:   200,
		RegistryMaxSize: 1 << 16,
	}
}

// withDefaults fills the zero fields of o from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	if o.CacheSize <= 0 {
		o.CacheSize = d.CacheSize
	}
	if o.MemoryLimit <= 0 {
		o.MemoryLimit = d.MemoryLimit
	}
	if o.MaxStringLen <= 0 {
		o.MaxStringLen = d.MaxStringLen
	}
	if o.CallStackSize <= 0 {
		o.CallStackSize = d.CallStackSize
	}
	if o.RegistryMaxSize <= 0 {
		o.RegistryMaxSize = d.RegistryMaxSize
	}
	return o
}

// Script is Lua source and the name errors show for it: a file path, or a
// file and field such as "profiles/x.yaml spec.healthChecks[0].script".
type Script struct {
	Name   string // "script" when empty
	Source string
}

func (s Script) named() Script {
	if s.Name == "" {
		s.Name = "script"
	}
	return s
}

// Runner runs scripts in sandboxed Lua states. It is safe for concurrent use:
// each call gets a fresh state; only compiled code is shared.
type Runner struct {
	opts  Options
	cache *protoCache
	watch *allocWatch
}

// NewRunner returns a Runner with opts (zero fields defaulted).
func NewRunner(opts Options) *Runner {
	opts = opts.withDefaults()
	return &Runner{
		opts:  opts,
		cache: newProtoCache(opts.CacheSize),
		watch: newAllocWatch(opts.MemoryLimit),
	}
}

// Options returns the options in effect, defaults filled in.
func (r *Runner) Options() Options { return r.opts }

// Compile checks that a script compiles, and caches it. Use it to report
// syntax errors when configuration is loaded rather than when it first runs.
func (r *Runner) Compile(s Script) error {
	_, err := r.cache.get(s.named())
	return err
}

// Stats reports the compiled-script cache.
func (r *Runner) Stats() CacheStats { return r.cache.stats() }
