package render

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"text/template"
)

// tickFunc is the function instrument.go calls at the start of every list
// of actions: it charges the list's length to the budget.
const tickFunc = "regattaTick"

var errorType = reflect.TypeFor[error]()

// boundedFuncs returns fm with every function wrapped to charge b, check
// the size its arguments imply (sizeChecks) before the call and the size
// of its result after it; plus the builtins print, printf and println,
// bounded the same way, and the tick.
func boundedFuncs(fm template.FuncMap, b *budget) template.FuncMap {
	out := make(template.FuncMap, len(fm)+2)
	for name, fn := range fm {
		out[name] = wrapFunc(b, name, fn)
	}
	out["printf"] = wrapFunc(b, "printf", fmt.Sprintf)
	out["print"] = wrapFunc(b, "print", fmt.Sprint)
	out["println"] = wrapFunc(b, "println", fmt.Sprintln)
	out[tickFunc] = func(n int) (string, error) { return "", b.charge(int64(n)) }
	return out
}

// wrapFunc wraps fn (which returns a value and optionally an error) into
// a function of the same arguments that returns (value, error).
func wrapFunc(b *budget, name string, fn any) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	ins := make([]reflect.Type, t.NumIn())
	for i := range ins {
		ins[i] = t.In(i)
	}
	ft := reflect.FuncOf(ins, []reflect.Type{t.Out(0), errorType}, t.IsVariadic())
	check := sizeChecks[name]
	return reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
		fail := func(err error) []reflect.Value {
			return []reflect.Value{reflect.Zero(t.Out(0)), reflect.ValueOf(&err).Elem()}
		}
		if err := b.charge(1); err != nil {
			return fail(err)
		}
		if check != nil {
			if err := b.checkSize(name, check(args)); err != nil {
				return fail(err)
			}
		}
		var res []reflect.Value
		if t.IsVariadic() {
			res = v.CallSlice(args)
		} else {
			res = v.Call(args)
		}
		if len(res) == 2 && !res[1].IsNil() {
			return res
		}
		size := deepSize(res[0], b.lim.MaxValue+1)
		if err := b.checkSize(name, size); err != nil {
			return fail(err)
		}
		if err := b.charge(size / 64); err != nil {
			return fail(err)
		}
		return []reflect.Value{res[0], reflect.Zero(errorType)}
	}).Interface()
}

// sizeChecks estimate, from the arguments, the size of what a function
// would build, for the functions whose output can be much larger than
// their input.
var sizeChecks = map[string]func(args []reflect.Value) int64{
	"repeat":                     func(a []reflect.Value) int64 { return mulSize(a[0].Int(), int64(a[1].Len())) },
	"indent":                     indentSize,
	"nindent":                    indentSize,
	"until":                      func(a []reflect.Value) int64 { return mulSize(a[0].Int(), 8) },
	"untilStep":                  func(a []reflect.Value) int64 { return stepCount(a[0].Int(), a[1].Int(), a[2].Int()) },
	"seq":                        seqSize,
	"randAlpha":                  firstInt,
	"randAlphaNum":               firstInt,
	"randAscii":                  firstInt,
	"randNumeric":                firstInt,
	"randBytes":                  firstInt,
	"replace":                    replaceSize,
	"regexReplaceAll":            regexReplaceSize,
	"mustRegexReplaceAll":        regexReplaceSize,
	"regexReplaceAllLiteral":     regexReplaceSize,
	"mustRegexReplaceAllLiteral": regexReplaceSize,
	"join":                       joinSize,
	"wrap":                       func(a []reflect.Value) int64 { return wrapSize(a[0].Int(), 1, a[1].Len()) },
	"wrapWith":                   func(a []reflect.Value) int64 { return wrapSize(a[0].Int(), a[1].Len(), a[2].Len()) },
	"uniq":                       quadratic,
	"mustUniq":                   quadratic,
	"without":                    quadratic,
	"mustWithout":                quadratic,
	"printf":                     printfSize,
}

func firstInt(a []reflect.Value) int64 { return a[0].Int() }

func indentSize(a []reflect.Value) int64 {
	s := a[1].String()
	lines := int64(strings.Count(s, "\n") + 2)
	return mulSize(max(a[0].Int(), 0), lines) + int64(len(s))
}

func stepCount(start, stop, step int64) int64 {
	if step == 0 {
		return 0
	}
	n := (stop - start) / step
	if n < 0 {
		return 0
	}
	return mulSize(n+1, 8)
}

func seqSize(a []reflect.Value) int64 {
	ps := make([]int64, a[0].Len())
	for i := range ps {
		ps[i] = a[0].Index(i).Int()
	}
	switch len(ps) {
	case 1:
		return stepCount(1, ps[0], 1) * 3
	case 2:
		return stepCount(ps[0], ps[1], 1) * 3
	case 3:
		return stepCount(ps[0], ps[2], ps[1]) * 3
	}
	return 0
}

func replaceSize(a []reflect.Value) int64 {
	old, repl, src := a[0].String(), a[1].String(), a[2].String()
	n := int64(strings.Count(src, old))
	return int64(len(src)) + mulSize(n, int64(len(repl)))
}

// regexReplaceSize bounds regexReplaceAll(re, s, repl): each match is
// replaced by repl, whose $ references may each expand to the match.
func regexReplaceSize(a []reflect.Value) int64 {
	re, err := regexp.Compile(a[0].String())
	if err != nil {
		return 0 // the function reports it
	}
	s, repl := a[1].String(), a[2].String()
	dollars := int64(strings.Count(repl, "$"))
	total := int64(len(s))
	for _, m := range re.FindAllStringIndex(s, -1) {
		total += int64(len(repl)) + mulSize(dollars, int64(m[1]-m[0]))
		if total < 0 || total > 1<<40 {
			return -1
		}
	}
	return total
}

func joinSize(a []reflect.Value) int64 {
	list := reflect.Indirect(a[1])
	if list.Kind() == reflect.Interface {
		list = list.Elem()
	}
	if list.Kind() != reflect.Slice && list.Kind() != reflect.Array {
		return 0
	}
	return mulSize(int64(a[0].Len()), int64(list.Len()))
}

func wrapSize(width int64, sep, n int) int64 {
	width = max(width, 1)
	return int64(n) + mulSize(int64(n)/width+1, int64(sep))
}

// quadratic charges list functions that compare every pair of elements:
// the cost is the square of the list's length, in bytes-equivalent.
func quadratic(a []reflect.Value) int64 {
	v := a[0]
	if v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return 0
	}
	n := int64(v.Len())
	return mulSize(n, n) / 64
}

// printfSize bounds Sprintf's output: the format, the widths and
// precisions it asks for (fmt caps each at 1e6) and the arguments.
func printfSize(a []reflect.Value) int64 {
	format := a[0].String()
	total := int64(len(format)) + deepSize(a[1], 1<<40)
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		n := int64(0)
		for i++; i < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[i]) >= 0; i++ {
			c := format[i]
			switch {
			case c >= '0' && c <= '9':
				n = min(n*10+int64(c-'0'), 1e6)
			case c == '*':
				n = 1e6
			case c == '.':
				total += n
				n = 0
			}
		}
		total += n
	}
	return total
}

// deepSize estimates the memory of a value: bytes of strings, 8 per
// scalar, 16 per element, plus depth (output indents by depth). Shared
// parts count each time they are reached, so a value built by doubling a
// list is as large as it would print. It stops counting past limit.
func deepSize(v reflect.Value, limit int64) int64 {
	var total int64
	var walk func(v reflect.Value, depth int64)
	walk = func(v reflect.Value, depth int64) {
		if total > limit || !v.IsValid() {
			return
		}
		total += depth
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), depth)
			}
		case reflect.String:
			total += int64(v.Len())
		case reflect.Slice, reflect.Array:
			if k := v.Type().Elem().Kind(); k <= reflect.Complex128 || k == reflect.Uint8 {
				total += int64(v.Len()) * 8
				return
			}
			for i := 0; i < v.Len() && total <= limit; i++ {
				total += 16
				walk(v.Index(i), depth+1)
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() && total <= limit {
				total += 16
				walk(it.Key(), depth+1)
				walk(it.Value(), depth+1)
			}
		case reflect.Struct:
			for i := 0; i < v.NumField() && total <= limit; i++ {
				walk(v.Field(i), depth+1)
			}
		default:
			total += 8
		}
	}
	walk(v, 0)
	return total
}
