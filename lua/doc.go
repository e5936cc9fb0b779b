// Package lua runs user scripts — classification and health checks — in a
// sandboxed gopher-lua VM (Lua 5.1).
//
// # API
//
//	r := lua.NewRunner(lua.Options{})            // zero fields take DefaultOptions
//	s := lua.Script{Name: "profiles/x.yaml spec.healthChecks[0].script", Source: src}
//	hs, err := r.Health(ctx, s, obj)              // lua.HealthStatus{Status, Message}
//	m, err := r.EvaluateObject(ctx, s, obj)       // lua.Match{Matching, Message}
//	m, err := r.EvaluateAggregated(ctx, s, objs)  // global resources instead of obj
//	rs, err := r.CheckResources(ctx, s, objs)     // []lua.ResourceHealth: an alert's health check over many objects
//	v, err := r.Run(ctx, s, globals)              // any script, result converted to Go
//	err := r.Compile(s)                           // syntax check at load time
//	src, ok := lua.BuiltinHealth("cert-manager.io", "Certificate")
//
// Objects are plain map[string]any as decoded from JSON or YAML (an
// unstructured.Unstructured's Object works as is). A Runner is safe for
// concurrent use and holds no state besides its options and a bounded cache
// of compiled scripts; the package has no mutable package-level state.
//
// # Script conventions
//
// Health scripts follow Argo CD: they read the global obj and return a table
// hs with hs.status (Healthy, Progressing, Degraded, Suspended, Missing or
// Unknown) and hs.message. Argo CD health.lua files work unchanged:
//
//	hs = {}
//	if obj.status ~= nil and obj.status.phase == "Bound" then
//	  hs.status = "Healthy"
//	  return hs
//	end
//	hs.status = "Progressing"
//	hs.message = "Waiting for a volume"
//	return hs
//
// As in Argo CD, an hs.status outside that list, or none (`return {}`), is
// no error: Health returns Unknown with a message that says why.
// HealthSelector picks a script by group and kind, globs included, most
// specific key first, built-in scripts last.
//
// Classification scripts follow Sveltos: they define function evaluate()
// returning hs with hs.matching (a boolean) and hs.message, and read the
// global obj (EvaluateObject) or resources, an array of objects
// (EvaluateAggregated). Either style works for either purpose: when the
// script's top level returns nothing, the global evaluate() is called.
//
// Health checks over many objects (CheckResources, an alert's healthChecks)
// follow Sveltos' HealthCheck: they read resources, an array of objects, and
// return hs with hs.resources, an array of {resource = <one of resources>,
// status = "Healthy" | "Progressing" | "Degraded" | "Suspended", message =
// "..."}; the object is named from resource.kind and resource.metadata.
//
// # Helpers
//
// Besides Lua's base functions, string, table, math and os.time, os.date and
// os.clock, scripts get these globals:
//
//	json.encode(value) -> string     compact JSON, keys sorted, no HTML escaping
//	json.decode(string) -> value     null becomes nil; arrays keep their array-ness
//	base64.encode(string) -> string  standard alphabet, padded
//	base64.decode(string) -> string  standard alphabet, padding optional
//	strings.split(s, sep) -> array   every piece, also empty ones; sep "" splits characters
//	strings.join(array, sep) -> string
//	strings.hasPrefix(s, prefix), strings.hasSuffix(s, suffix), strings.contains(s, sub) -> boolean
//	strings.trim(s [, cutset])       white space, or the bytes of cutset, off both ends
//	strings.trimPrefix(s, prefix), strings.trimSuffix(s, suffix) -> string
//	strings.replace(s, old, new [, n]) -> string   plain text (not a pattern), all or the first n
//	getLabel(obj, key), getAnnotation(obj, key) -> string or nil
//	getCondition(obj, type) -> the entry of obj.status.conditions with that type, or nil
//	semver.compare(a, b) -> -1, 0 or 1
//	semver.eq, semver.gt, semver.gte, semver.lt, semver.lte (a, b) -> boolean
//	semver.parse(v) -> {major, minor, patch, prerelease}
//
// Helpers raise an error on bad input (invalid JSON, base64 or version);
// scripts may catch it with pcall. Versions may start with "v" and omit the
// minor or patch number; build metadata is ignored; prereleases order before
// their release ("v1.28.3-gke.100" < "v1.28.3").
//
// Conversion: Go numbers become Lua numbers (float64, so integers beyond
// 2^53 round); back in Go, whole numbers are int64 and others float64. A
// Go slice becomes a table marked as an array, so an empty one comes back
// (or JSON-encodes) as an empty array, and an empty Lua table otherwise as
// an empty map. Tables with keys exactly 1..n are arrays, others maps.
//
// # Sandbox guarantees
//
//   - Only the libraries above exist: no io, debug, package, require, module,
//     load, loadstring, loadfile, dofile, collectgarbage, coroutine, channel,
//     string.dump, or os beyond time, date and clock. print does nothing.
//   - Each call runs in a fresh state that is closed afterwards; states are
//     never shared or reused, so globals cannot leak between calls. Only
//     compiled bytecode (read-only) is shared, cached by source hash.
//   - Deadline: Options.Timeout (default 1s), or the caller's context if it
//     ends sooner. The VM checks it every 256 instructions, the pattern
//     matcher every 1024 steps (so even a catastrophic pattern ends on time),
//     and table.sort every 256 comparisons.
//     The check re-raises at every instruction once tripped, so pcall cannot
//     swallow it. The error wraps context.DeadlineExceeded (or Canceled).
//   - Memory: no single step can build a string longer than
//     Options.MaxStringLen (default 4 MiB) — "..", string.rep, string.format,
//     string.gsub, table.concat, json.encode, base64.encode and the strings
//     helpers check sizes before (gsub: while) they build; and a watchdog stops a call once the Go heap
//     has allocated Options.MemoryLimit (default 256 MiB) since it started.
//     Both fail with ErrMemoryLimit. Options.MaxInstructions optionally caps
//     the work of a call deterministically (ErrInstructionLimit).
//   - Size: Lua calls nest at most Options.CallStackSize deep, the data stack
//     holds at most Options.RegistryMaxSize values, patterns nest at most 200
//     deep, converted values at most 200 levels; sources are at most 1 MiB
//     with blocks and expressions nested at most 1000 levels.
//   - Errors name the script and the Lua line, without stack traces:
//     "profiles/x.yaml spec.healthChecks[0].script:3: attempt to index a nil
//     value with key 'status'". They are *ScriptError; errors.Is tells
//     ErrSyntax, ErrRuntime, ErrInvalidResult, ErrMemoryLimit,
//     ErrInstructionLimit and the context errors apart.
//
// # Limits of the guarantees
//
//   - The memory watchdog reads the process-wide allocation counter (Go has
//     no per-goroutine one), so a call is charged for what other goroutines
//     allocate while it runs, and it notices an overrun within about a
//     millisecond. Keep MemoryLimit well above what the process allocates in
//     one Timeout. The bound is on allocation, not on live memory, and a
//     stopped call may overshoot it by what it allocates in that millisecond.
//   - A single Go helper (json.decode of a large string, strings.split) runs
//     to completion before the deadline is checked again; its work is
//     bounded by MaxStringLen.
//   - Importing this package lowers gopher-lua's global MaxArrayIndex to
//     2^20 for the whole process: with the default, one assignment such as
//     t[67108863] = true allocates 1 GiB in a single uninterruptible step.
//     In exchange #t counts at most 2^20 - 1 elements (ipairs and indexing
//     still see all of them).
//   - Scripts see wall-clock time through os.time and os.date; there is no
//     other access to the host.
package lua
