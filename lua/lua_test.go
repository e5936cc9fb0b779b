package lua

import (
	"context"
	"encoding/json"
	"testing"
)

// run executes source with globals on a default Runner and returns its result.
func run(t *testing.T, source string, globals map[string]any) (any, error) {
	t.Helper()
	return NewRunner(Options{}).Run(context.Background(), Script{Name: "test.lua", Source: source}, globals)
}

// mustRun is run that fails the test on error.
func mustRun(t *testing.T, source string, globals map[string]any) any {
	t.Helper()
	v, err := run(t, source, globals)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return v
}

// equalJSON compares two values as their JSON encodings.
func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
