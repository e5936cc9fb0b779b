package lua

import (
	"reflect"
	"testing"
)

var node = map[string]any{
	"metadata": map[string]any{
		"name":        "n1",
		"labels":      map[string]any{"node-role.kubernetes.io/control-plane": "", "zone": "eu-1a"},
		"annotations": map[string]any{"regatta.dev/owner": "team-a"},
	},
	"status": map[string]any{
		"conditions": []any{
			map[string]any{"type": "MemoryPressure", "status": "False"},
			map[string]any{"type": "Ready", "status": "True", "reason": "KubeletReady"},
		},
	},
}

func TestHelpers(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want any
	}{
		// json
		{`return json.encode({b = 1, a = {true, false}, c = "<&>", d = 1.5})`, `{"a":[true,false],"b":1,"c":"<&>","d":1.5}`},
		{`return json.encode(obj.status.conditions[2])`, `{"reason":"KubeletReady","status":"True","type":"Ready"}`},
		{`return json.encode(json.decode('{"x":[],"y":{},"z":null}'))`, `{"x":[],"y":{}}`},
		{`return json.decode('{"a":{"b":[1,"two",3.5]}}').a.b[2]`, "two"},
		{`return json.decode('"s"')`, "s"},
		{`return json.encode("tab\tquote\"")`, `"tab\tquote\""`},
		// base64
		{`return base64.encode("hello, world")`, "aGVsbG8sIHdvcmxk"},
		{`return base64.decode("aGVsbG8sIHdvcmxk")`, "hello, world"},
		{`return base64.decode("aGk")`, "hi"},
		{`return base64.decode(base64.encode("\0\1\255"))`, "\x00\x01\xff"},
		// strings
		{`return strings.split("a,b,,c", ",")`, []any{"a", "b", "", "c"}},
		{`return strings.split("abc", "")`, []any{"a", "b", "c"}},
		{`return #strings.split("", ",")`, int64(1)},
		{`return strings.join({"a", "b", 3}, "-")`, "a-b-3"},
		{`return strings.hasPrefix("v1.28.3", "v1.")`, true},
		{`return strings.hasPrefix("v1.28.3", "1.")`, false},
		{`return strings.hasSuffix("image:latest", ":latest")`, true},
		{`return strings.contains("CrashLoopBackOff", "Loop")`, true},
		{`return strings.contains("a.b", ".")`, true},
		{`return strings.trim("  x y \n")`, "x y"},
		{`return strings.trim("--x--", "-")`, "x"},
		{`return strings.trimPrefix("v1.2", "v")`, "1.2"},
		{`return strings.trimSuffix("a.yaml", ".yaml")`, "a"},
		{`return strings.replace("a.b.c", ".", "/")`, "a/b/c"},
		{`return strings.replace("a.b.c", ".", "/", 1)`, "a/b.c"},
		// object helpers
		{`return getLabel(obj, "zone")`, "eu-1a"},
		{`return getLabel(obj, "node-role.kubernetes.io/control-plane")`, ""},
		{`return getLabel(obj, "missing")`, nil},
		{`return getLabel({}, "zone")`, nil},
		{`return getLabel(nil, "zone")`, nil},
		{`return getAnnotation(obj, "regatta.dev/owner")`, "team-a"},
		{`return getAnnotation({metadata = {}}, "x")`, nil},
		{`return getCondition(obj, "Ready").reason`, "KubeletReady"},
		{`return getCondition(obj, "DiskPressure")`, nil},
		{`return getCondition({}, "Ready")`, nil},
	} {
		got, err := run(t, tc.src, map[string]any{"obj": node})
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.src, got, tc.want)
		}
	}
}

func TestHelperErrors(t *testing.T) {
	for src, want := range map[string]string{
		`return json.decode("{")`:           "test.lua:1: json.decode: unexpected end of JSON input",
		`return json.encode({f = print})`:   "test.lua:1: json.encode: cannot convert a Lua function",
		`return json.encode(0/0)`:           "test.lua:1: json.encode: json: unsupported value: NaN",
		`return base64.decode("***")`:       "test.lua:1: base64.decode: illegal base64 data at input byte 0",
		`return semver.compare("1.x", "1")`: `test.lua:1: semver: invalid version "1.x"`,
		`return strings.split(nil, ",")`:    "test.lua:1: bad argument #1 to split (string expected, got nil)",
	} {
		_, err := run(t, src, nil)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", src, err, want)
		}
	}
}

func TestSemverHelpers(t *testing.T) {
	src := `return {
  semver.compare("1.2.3", "1.2.3"), semver.compare("v1.28.0", "1.27.9"), semver.compare("1.0.0-rc.1", "1.0.0"),
  semver.gte("v1.28.3", "1.28.0"), semver.gt("1.28.0", "1.28.0"), semver.lt("1.9.0", "1.10.0"),
  semver.lte("2.0.0", "2.0.0"), semver.eq("v1.2.0", "1.2"), semver.parse("v1.28.3-gke.100+build").minor,
  semver.parse("v1.28.3-gke.100").prerelease,
}`
	want := []any{int64(0), int64(1), int64(-1), true, false, true, true, true, int64(28), "gke.100"}
	if got := mustRun(t, src, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestSemverPrecedence(t *testing.T) {
	// semver.org 2.0.0 §11 lists these in increasing precedence.
	ordered := []string{
		"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "1.10.0", "2.0.0", "v10.0.0",
	}
	for i := range ordered {
		for j := range ordered {
			a, errA := parseSemver(ordered[i])
			b, errB := parseSemver(ordered[j])
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if got, want := compareSemver(a, b), cmpInt(i, j); got != want {
				t.Errorf("compare(%s, %s) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	for _, bad := range []string{"", "x", "1.2.3.4", "1..2", "1.2.3-", "1.2.3-a..b", "1.2.3-a_b", "-1.0.0"} {
		if _, err := parseSemver(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	for _, same := range [][2]string{{"1.2.3+build.5", "1.2.3"}, {"V1", "1.0.0"}, {" 1.2 ", "1.2.0"}} {
		a, _ := parseSemver(same[0])
		b, _ := parseSemver(same[1])
		if compareSemver(a, b) != 0 {
			t.Errorf("%s != %s", same[0], same[1])
		}
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
