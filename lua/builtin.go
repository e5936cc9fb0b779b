package lua

import (
	"embed"
	"io/fs"
	"path"
	"strings"
)

// builtinHealth holds the built-in health scripts, one folder per group and
// kind: health/<group>/<Kind>/health.lua, with "core" for the core group.
// Each folder also has health_test.yaml and testdata/, which stay out of the
// binary and which TestBuiltinHealth runs.
//
//go:embed health/*/*/health.lua
var builtinHealth embed.FS

// GroupKind names a Kubernetes kind; Group is "" for the core group.
type GroupKind struct {
	Group string
	Kind  string
}

// String renders "Kind.group", or "Kind" for the core group.
func (gk GroupKind) String() string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// BuiltinHealth returns the built-in health script for group and kind, if
// there is one. The core group is "" (or "core").
func BuiltinHealth(group, kind string) (script string, ok bool) {
	if group == "" {
		group = "core"
	}
	if strings.ContainsAny(group+kind, "/\\") || kind == "" {
		return "", false
	}
	b, err := builtinHealth.ReadFile(path.Join("health", group, kind, "health.lua"))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// BuiltinHealthKinds lists the kinds BuiltinHealth has a script for.
func BuiltinHealthKinds() []GroupKind {
	files, _ := fs.Glob(builtinHealth, "health/*/*/health.lua")
	kinds := make([]GroupKind, 0, len(files))
	for _, f := range files {
		parts := strings.Split(f, "/")
		gk := GroupKind{Group: parts[1], Kind: parts[2]}
		if gk.Group == "core" {
			gk.Group = ""
		}
		kinds = append(kinds, gk)
	}
	return kinds
}
