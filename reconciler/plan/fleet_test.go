package plan

import (
	"fmt"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/regatta-dev/regatta/spec"
)

// fleet writes profiles as a repository so spec.Load compiles them.
func fleet(ps ...*spec.Profile) fstest.MapFS {
	fsys := fstest.MapFS{"m/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")}}
	for _, p := range ps {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: %s}\nspec:\n", p.Metadata.Name)
		keys := make([]string, 0)
		for k := range p.Spec.ClusterSelector.MatchLabels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("  clusterSelector:\n    matchLabels:\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "      %s: %s\n", k, p.Spec.ClusterSelector.MatchLabels[k])
		}
		if len(p.Spec.DependsOn) > 0 {
			fmt.Fprintf(&b, "  dependsOn: [%s]\n", strings.Join(p.Spec.DependsOn, ", "))
		}
		b.WriteString("  addons:\n  - name: x\n    manifests: {path: m}\n")
		fsys["profiles/"+p.Metadata.Name+".yaml"] = &fstest.MapFile{Data: []byte(b.String())}
	}
	return fsys
}
