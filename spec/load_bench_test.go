package spec

import (
	"fmt"
	"testing"
	"testing/fstest"
)

// fleetFS generates a repository of n clusters and p profiles, each profile
// with a Kustomize add-on and a dependsOn on its predecessor.
func fleetFS(n, p int) fstest.MapFS {
	fsys := fstest.MapFS{
		"addons/app/kustomization.yaml": {Data: []byte("resources: []\n")},
	}
	envs := []string{"prod", "staging", "dev"}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("cluster-%04d", i)
		fsys["clusters/"+name+"/cluster.yaml"] = &fstest.MapFile{Data: []byte(fmt.Sprintf(
			"apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\n  labels: {env: %s, region: r%d}\nspec:\n  kubeconfig:\n    secretRef: {namespace: fleet}\n  values: {index: %d}\n",
			name, envs[i%3], i%10, i))}
	}
	for i := 0; i < p; i++ {
		deps := "[]"
		if i > 0 {
			deps = fmt.Sprintf("[profile-%03d]", i-1)
		}
		fsys[fmt.Sprintf("profiles/profile-%03d.yaml", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf(
			"apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: profile-%03d}\nspec:\n  clusterSelector:\n    matchLabels: {env: %s}\n    matchExpressions: [{key: region, operator: In, values: [r1, r2, r3]}]\n  dependsOn: %s\n  addons:\n  - name: app\n    kustomize: {path: addons/app}\n",
			i, envs[i%3], deps))}
	}
	return fsys
}

func TestLoadGeneratedFleet(t *testing.T) {
	repo, diags := Load(fleetFS(30, 12))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	if len(repo.Clusters) != 30 || len(repo.Profiles) != 12 {
		t.Fatalf("loaded %d clusters and %d profiles", len(repo.Clusters), len(repo.Profiles))
	}
}

// BenchmarkLoad1000Clusters200Profiles is the yardstick: a fleet of
// 1,000 clusters and 200 profiles must validate well under 2 s.
func BenchmarkLoad1000Clusters200Profiles(b *testing.B) {
	fsys := fleetFS(1000, 200)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, diags := Load(fsys); diags.Err() != nil {
			b.Fatal(diags.Err())
		}
	}
}
