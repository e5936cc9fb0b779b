package spec

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"
)

func TestResolvePath(t *testing.T) {
	link := func(target string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink | 0o777}
	}
	fsys := fstest.MapFS{
		"a/b/file.yaml": {Data: []byte("x")},
		"link-in":       link("a/b"),
		"a/up":          link("../.."),
		"a/abs":         link("/etc"),
		"loop":          link("loop"),
	}
	tests := []struct {
		in, want string
		escapes  bool
		fails    bool
	}{
		{in: "a/b/file.yaml", want: "a/b/file.yaml"},
		{in: "./a//b/../b", want: "a/b"},
		{in: "link-in/file.yaml", want: "a/b/file.yaml"},
		{in: "missing/x", want: "missing/x"},
		{in: "../x", escapes: true},
		{in: "a/../../x", escapes: true},
		{in: "/etc/passwd", escapes: true},
		{in: "a/up/x", escapes: true},
		{in: "a/abs", escapes: true},
		{in: "loop/x", fails: true},
	}
	for _, tt := range tests {
		got, err := ResolvePath(fsys, tt.in)
		switch {
		case tt.escapes:
			if !errors.Is(err, ErrPathEscapes) {
				t.Errorf("ResolvePath(%q) = %q, %v; want ErrPathEscapes", tt.in, got, err)
			}
		case tt.fails:
			if err == nil {
				t.Errorf("ResolvePath(%q) = %q; want an error", tt.in, got)
			}
		case err != nil || got != tt.want:
			t.Errorf("ResolvePath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestVersionRangeOverlaps(t *testing.T) {
	mk := func(cs ...VersionConstraint) versionRange {
		return versionRangeOf(&Classifier{Spec: ClassifierSpec{KubernetesVersionConstraints: cs}})
	}
	c := func(cmp, v string) VersionConstraint { return VersionConstraint{Comparison: cmp, Version: v} }
	ge := func(v string) VersionConstraint { return c(CompareGreaterThanOrEqualTo, v) }
	gt := func(v string) VersionConstraint { return c(CompareGreaterThan, v) }
	lt := func(v string) VersionConstraint { return c(CompareLessThan, v) }
	le := func(v string) VersionConstraint { return c(CompareLessThanOrEqualTo, v) }
	eq := func(v string) VersionConstraint { return c(CompareEqual, v) }
	tests := []struct {
		name string
		a, b versionRange
		want bool
	}{
		{"minor ranges side by side", mk(ge("1.36.0"), lt("1.37.0")), mk(ge("1.37.0"), lt("1.38.0")), false},
		{"touching inclusive ends", mk(le("1.37.0")), mk(ge("1.37.0")), true},
		{"open ends", mk(lt("1.37.0")), mk(gt("1.36.9")), true},
		{"equal point inside", mk(eq("1.36.3")), mk(ge("1.36.0"), lt("1.37.0")), true},
		{"equal points differ", mk(eq("1.36.3")), mk(eq("1.36.4")), false},
		{"unconstrained", mk(), mk(lt("1.0.0")), true},
		{"gt and le same", mk(gt("1.37.0")), mk(le("1.37.0")), false},
		{"v prefix", mk(ge("v1.36.0"), lt("v1.37.0")), mk(ge("1.37.0")), false},
	}
	for _, tt := range tests {
		if got := tt.a.overlaps(tt.b); got != tt.want {
			t.Errorf("%s: a.overlaps(b) = %v, want %v", tt.name, got, tt.want)
		}
		if got := tt.b.overlaps(tt.a); got != tt.want {
			t.Errorf("%s: b.overlaps(a) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]string{"v1.37.2": "1.37.2", "1.36.3-eks-4f4795d": "1.36.3", "v1.35.4+k3s1": "1.35.4", "1.30": "1.30.0"} {
		v, err := ParseVersion(in)
		if err != nil || v.String() != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %s", in, v, err, want)
		}
	}
	if _, err := ParseVersion("latest"); err == nil {
		t.Error("ParseVersion(latest) succeeded")
	}
}
