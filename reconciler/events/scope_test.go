package events

import (
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/spec"
)

// TestWatchNamespaces: on a whole cluster a resource selector is watched in
// its own namespace (or all); on a namespace-scoped entry in each of the
// entry's namespaces, or its own when the entry lists it, and never across
// namespaces, in another namespace or for a cluster-scoped kind.
func TestWatchNamespaces(t *testing.T) {
	entry := []string{"a", "b"}
	for _, tc := range []struct {
		name       string
		entry      []string
		rsNS       string
		namespaced bool
		want, err  string
	}{
		{name: "whole cluster, every namespace", namespaced: true, want: ""},
		{name: "whole cluster, one namespace", rsNS: "x", namespaced: true, want: "x"},
		{name: "whole cluster, cluster-scoped", want: ""},
		{name: "scoped, every namespace", entry: entry, namespaced: true, want: "a,b"},
		{name: "scoped, its namespace", entry: entry, rsNS: "b", namespaced: true, want: "b"},
		{name: "scoped, another namespace", entry: entry, rsNS: "x", namespaced: true, err: "namespace x is not one of cluster c's namespaces (spec.namespaces: a, b)"},
		{name: "scoped, cluster-scoped", entry: entry, err: "kind Node is cluster-scoped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := watchNamespaces("c", tc.entry, spec.ResourceSelector{Kind: "Node", Namespace: tc.rsNS}, tc.namespaced)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || strings.Join(got, ",") != tc.want {
				t.Fatalf("%q %v, want %q", got, err, tc.want)
			}
		})
	}
}
