package lua

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	glua "github.com/yuin/gopher-lua"
)

// The helper modules; doc.go documents them.

func (c *call) buildJSON() glua.LValue {
	return c.module([]namedFunc{{"encode", c.jsonEncode}, {"decode", c.jsonDecode}})
}

func (c *call) buildBase64() glua.LValue {
	return c.module([]namedFunc{{"encode", c.base64Encode}, {"decode", base64Decode}})
}

func (c *call) buildStrings() glua.LValue {
	return c.module([]namedFunc{
		{"split", c.stringsSplit}, {"join", c.tableConcat}, {"replace", c.stringsReplace},
		{"hasPrefix", stringsPredicate(strings.HasPrefix)}, {"hasSuffix", stringsPredicate(strings.HasSuffix)},
		{"contains", stringsPredicate(strings.Contains)}, {"trim", stringsTrim},
		{"trimPrefix", stringsTransform(strings.TrimPrefix)}, {"trimSuffix", stringsTransform(strings.TrimSuffix)},
	})
}

func (c *call) buildSemver() glua.LValue { return c.module(semverFuncs()) }

// helperFailed raises err from helper what; memory-limit errors end the call.
func (c *call) helperFailed(what string, err error) {
	if errors.Is(err, ErrMemoryLimit) {
		c.abort(fmt.Errorf("%s: %w", what, err))
	}
	c.L.RaiseError("%s: %v", what, err)
}

// jsonEncode is json.encode(value): compact JSON, keys sorted, no HTML escaping.
func (c *call) jsonEncode(L *glua.LState) int {
	v, err := (&toGo{arrayMT: c.arrayMT, budget: c.opts.MaxStringLen}).value(L.CheckAny(1), 0)
	if err != nil {
		c.helperFailed("json.encode", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		c.helperFailed("json.encode", err)
	}
	c.checkLen("json.encode", buf.Len()-1)
	L.Push(glua.LString(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))))
	return 1
}

// jsonDecode is json.decode(string): objects become tables, arrays tables
// marked as arrays, null nil.
func (c *call) jsonDecode(L *glua.LState) int {
	var v any
	if err := json.Unmarshal([]byte(L.CheckString(1)), &v); err != nil {
		c.helperFailed("json.decode", err)
	}
	lv, err := c.helperValue(v)
	if err != nil {
		c.helperFailed("json.decode", err)
	}
	L.Push(lv)
	return 1
}

// helperValue converts a value a helper built, at most MaxStringLen/16
// elements (each costs tens of bytes as Lua values).
func (c *call) helperValue(v any) (glua.LValue, error) {
	return (&toLua{L: c.L, arrayMT: c.arrayMT, budget: c.opts.MaxStringLen / 16}).value(v, 0)
}

func (c *call) base64Encode(L *glua.LState) int {
	s := L.CheckString(1)
	c.checkLen("base64.encode", base64.StdEncoding.EncodedLen(len(s)))
	L.Push(glua.LString(base64.StdEncoding.EncodeToString([]byte(s))))
	return 1
}

// base64Decode accepts standard base64 with or without padding.
func base64Decode(L *glua.LState) int {
	s := L.CheckString(1)
	out, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		out, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil {
		L.RaiseError("base64.decode: %v", err)
	}
	L.Push(glua.LString(out))
	return 1
}

// stringsSplit is strings.split(s, sep): an array of the pieces between
// each sep (of each UTF-8 character when sep is "").
func (c *call) stringsSplit(L *glua.LState) int {
	s, sep := L.CheckString(1), L.CheckString(2)
	if n := strings.Count(s, sep) + 1; n > c.opts.MaxStringLen/16 {
		c.abort(fmt.Errorf("%w: strings.split would make %d pieces", ErrMemoryLimit, n))
	}
	lv, err := c.helperValue(strings.Split(s, sep))
	if err != nil {
		c.helperFailed("strings.split", err)
	}
	L.Push(lv)
	return 1
}

// stringsReplace is strings.replace(s, old, new [, n]): plain text, no
// patterns; every occurrence unless n is given.
func (c *call) stringsReplace(L *glua.LState) int {
	s, old, repl := L.CheckString(1), L.CheckString(2), L.CheckString(3)
	n := L.OptInt(4, -1)
	count := strings.Count(s, old)
	if n >= 0 {
		count = min(count, n)
	}
	c.checkLen("strings.replace", len(s)+count*(len(repl)-len(old)))
	L.Push(glua.LString(strings.Replace(s, old, repl, n)))
	return 1
}

func stringsPredicate(fn func(s, x string) bool) glua.LGFunction {
	return func(L *glua.LState) int {
		L.Push(glua.LBool(fn(L.CheckString(1), L.CheckString(2))))
		return 1
	}
}

func stringsTransform(fn func(s, x string) string) glua.LGFunction {
	return func(L *glua.LState) int {
		L.Push(glua.LString(fn(L.CheckString(1), L.CheckString(2))))
		return 1
	}
}

// stringsTrim is strings.trim(s [, cutset]): white space, or the bytes of cutset.
func stringsTrim(L *glua.LState) int {
	s := L.CheckString(1)
	if L.GetTop() >= 2 {
		L.Push(glua.LString(strings.Trim(s, L.CheckString(2))))
	} else {
		L.Push(glua.LString(strings.TrimSpace(s)))
	}
	return 1
}

// metadataLookup makes getLabel(obj, key) and getAnnotation(obj, key):
// obj.metadata[field][key], or nil when any step is missing.
func metadataLookup(field string) glua.LGFunction {
	return func(L *glua.LState) int {
		key := L.CheckString(2)
		L.Push(rawPath(L.Get(1), "metadata", field, key))
		return 1
	}
}

// getCondition(obj, type) returns the entry of obj.status.conditions whose
// type is type, or nil.
func getCondition(L *glua.LState) int {
	want := L.CheckString(2)
	conds, ok := rawPath(L.Get(1), "status", "conditions").(*glua.LTable)
	if ok {
		for i := 1; i <= conds.Len(); i++ {
			if rawPath(conds.RawGetInt(i), "type") == glua.LString(want) {
				L.Push(conds.RawGetInt(i))
				return 1
			}
		}
	}
	L.Push(glua.LNil)
	return 1
}

// rawPath walks raw table fields, returning nil at the first non-table.
func rawPath(v glua.LValue, keys ...string) glua.LValue {
	for _, k := range keys {
		t, ok := v.(*glua.LTable)
		if !ok {
			return glua.LNil
		}
		v = t.RawGetString(k)
	}
	return v
}
