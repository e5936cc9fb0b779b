package lua

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	glua "github.com/yuin/gopher-lua"
)

// semVersion is a semantic version (semver.org 2.0.0), read leniently: a
// leading "v", and missing minor or patch numbers (read as 0), are accepted;
// build metadata after "+" is ignored.
type semVersion struct {
	major, minor, patch uint64
	pre                 []string // prerelease identifiers; none for a release
}

func parseSemver(s string) (semVersion, error) {
	var v semVersion
	in := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "v"), "V")
	in, _, _ = strings.Cut(in, "+")
	core, pre, hasPre := strings.Cut(in, "-")
	parts := strings.Split(core, ".")
	if len(parts) > 3 {
		return v, fmt.Errorf("invalid version %q", s)
	}
	nums := []*uint64{&v.major, &v.minor, &v.patch}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return v, fmt.Errorf("invalid version %q", s)
		}
		*nums[i] = n
	}
	if hasPre {
		v.pre = strings.Split(pre, ".")
		for _, id := range v.pre {
			if id == "" || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != "" {
				return v, fmt.Errorf("invalid version %q", s)
			}
		}
	}
	return v, nil
}

// compareSemver orders a and b by semver precedence: -1, 0 or 1.
func compareSemver(a, b semVersion) int {
	if c := cmp.Or(cmp.Compare(a.major, b.major), cmp.Compare(a.minor, b.minor), cmp.Compare(a.patch, b.patch)); c != 0 {
		return c
	}
	switch {
	case len(a.pre) == 0 && len(b.pre) == 0:
		return 0
	case len(a.pre) == 0:
		return 1 // a release follows its prereleases
	case len(b.pre) == 0:
		return -1
	}
	for i := 0; i < min(len(a.pre), len(b.pre)); i++ {
		if c := comparePrerelease(a.pre[i], b.pre[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a.pre), len(b.pre))
}

// comparePrerelease orders identifiers: numbers numerically and before words.
func comparePrerelease(a, b string) int {
	na, errA := strconv.ParseUint(a, 10, 64)
	nb, errB := strconv.ParseUint(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return cmp.Compare(na, nb)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// semverFuncs is the semver module: compare(a, b) returns -1, 0 or 1;
// eq, gt, gte, lt and lte return booleans; parse(v) returns a table with
// major, minor, patch and prerelease. Invalid versions raise an error.
func semverFuncs() []namedFunc {
	test := func(ok func(int) bool) glua.LGFunction {
		return func(L *glua.LState) int {
			L.Push(glua.LBool(ok(semverArgs(L))))
			return 1
		}
	}
	return []namedFunc{
		{"compare", func(L *glua.LState) int { L.Push(glua.LNumber(semverArgs(L))); return 1 }},
		{"eq", test(func(c int) bool { return c == 0 })},
		{"gt", test(func(c int) bool { return c > 0 })},
		{"gte", test(func(c int) bool { return c >= 0 })},
		{"lt", test(func(c int) bool { return c < 0 })},
		{"lte", test(func(c int) bool { return c <= 0 })},
		{"parse", semverParse},
	}
}

func semverArgs(L *glua.LState) int {
	return compareSemver(semverArg(L, 1), semverArg(L, 2))
}

func semverArg(L *glua.LState, n int) semVersion {
	v, err := parseSemver(L.CheckString(n))
	if err != nil {
		L.RaiseError("semver: %v", err)
	}
	return v
}

func semverParse(L *glua.LState) int {
	v := semverArg(L, 1)
	t := L.CreateTable(0, 4)
	t.RawSetString("major", glua.LNumber(v.major))
	t.RawSetString("minor", glua.LNumber(v.minor))
	t.RawSetString("patch", glua.LNumber(v.patch))
	t.RawSetString("prerelease", glua.LString(strings.Join(v.pre, ".")))
	L.Push(t)
	return 1
}
