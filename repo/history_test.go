package repo

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// AnyVersion finds a file's old versions behind the head of a shallow
// clone, over HTTP: the history is fetched when the walk reaches the
// shallow boundary; a path in no commit matches nothing.
func TestAnyVersion(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	up.write("clusters/x/cluster.yaml", "spec: {mode: push}\n")
	up.commit("x pushed")
	up.write("clusters/x/cluster.yaml", "spec: {mode: pull}\n")
	up.commit("x pulled")
	up.write("README.md", "later\n")
	head := up.commit("later")
	src := syncedOverHTTP(t, root)
	is := func(s string) func([]byte) bool { return func(b []byte) bool { return bytes.Contains(b, []byte(s)) } }
	for _, tt := range []struct {
		path, content string
		want          bool
	}{
		{"clusters/x/cluster.yaml", "mode: push", true},
		{"clusters/x/cluster.yaml", "mode: pull", true},
		{"clusters/x/cluster.yaml", "mode: other", false},
		{"clusters/y/cluster.yaml", "", false},
	} {
		got, err := src.AnyVersion(t.Context(), head, tt.path, is(tt.content))
		if err != nil || got != tt.want {
			t.Errorf("AnyVersion(%s, %q) = %v, %v; want %v", tt.path, tt.content, got, err, tt.want)
		}
	}
}

// Descends walks back from a commit the shallow clone does not hold yet
// (pushed after its last Sync): an older commit is behind it, a newer one
// is not, and a commit the branch never had fails with
// ErrRevisionNotFound.
func TestDescends(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	up.write("a", "1\n")
	old := up.commit("old")
	up.write("a", "2\n")
	mid := up.commit("mid")
	src := syncedOverHTTP(t, root)
	up.write("a", "3\n")
	head := up.commit("head") // not fetched by the Source yet
	for _, tt := range []struct {
		rev, base string
		want      bool
	}{
		{head, mid, true},
		{head, old, true},
		{mid, mid, true},
		{mid, head, false},
		{old, mid, false},
	} {
		if got, err := src.Descends(t.Context(), tt.rev, tt.base); err != nil || got != tt.want {
			t.Errorf("Descends(%.7s, %.7s) = %v, %v; want %v", tt.rev, tt.base, got, err, tt.want)
		}
	}
	_, err := src.Descends(t.Context(), strings.Repeat("ab", 20), mid)
	if !errors.Is(err, ErrRevisionNotFound) {
		t.Errorf("Descends from a commit the branch never had: %v, want ErrRevisionNotFound", err)
	}
}

// syncedOverHTTP serves root's fleet.git over HTTP and returns a Source
// that synced it (a shallow clone of the branch head).
func syncedOverHTTP(t *testing.T, root string) *Source {
	t.Helper()
	srv := newHTTPServer(t, root, nil)
	src, err := NewSource(Options{URL: srv.HTTPAddress() + "/fleet.git"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	return src
}
