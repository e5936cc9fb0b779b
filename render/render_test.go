package render

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const repoDir = "testdata/repo"

// loadProfile loads the test repository and returns one profile.
func loadProfile(t testing.TB, fsys fs.FS, name string) *spec.Profile {
	t.Helper()
	repo, diags := spec.Load(fsys)
	p := repo.Profile(name)
	if p == nil {
		t.Fatalf("profile %s not loaded: %v", name, diags)
	}
	return p
}

func prodCluster() ClusterFacts {
	return ClusterFacts{
		Name:              "prod-eu-1",
		Labels:            map[string]string{"fleet": "yes", "env": "prod", "region": "eu"},
		Values:            map[string]any{"replicas": 3},
		KubernetesVersion: "v1.37.2",
	}
}

func request(t testing.TB, fsys fs.FS, profile string, c ClusterFacts) Request {
	return Request{FS: fsys, Revision: "rev1", Profile: loadProfile(t, fsys, profile), Cluster: c}
}

// dump prints a result as the golden files hold it: each step, then each
// object with its source, in apply order.
func dump(t testing.TB, res *Result) string {
	t.Helper()
	var b strings.Builder
	for _, s := range res.Steps {
		fmt.Fprintf(&b, "# step addon=%s phase=%s weight=%d", s.Addon, s.Phase, s.Weight)
		if s.NoWait {
			b.WriteString(" nowait")
		}
		b.WriteString("\n")
		for _, o := range s.Objects {
			y, err := yaml.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "---\n# source: %s\n%s", o.Source, y)
		}
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", "golden", name+".yaml")
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestRenderGolden(t *testing.T) {
	fsys := os.DirFS(repoDir)
	staging := prodCluster()
	staging.Labels = map[string]string{"fleet": "yes", "env": "staging", "region": "eu"}
	us := prodCluster()
	us.Labels = map[string]string{"fleet": "yes", "env": "prod", "region": "us"}
	cases := []struct {
		name, profile string
		cluster       ClusterFacts
	}{
		{"plain", "plain", prodCluster()},
		{"kustomize", "kustomize", prodCluster()},
		{"templated", "templated", prodCluster()},
		{"overlays-eu-prod", "overlays", prodCluster()},
		{"overlays-eu-staging", "overlays", staging},
		{"overlays-us-prod", "overlays", us},
	}
	r := New(Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := r.Render(context.Background(), request(t, fsys, c.profile, c.cluster))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, dump(t, res))
		})
	}
}

func TestRenderErrors(t *testing.T) {
	fsys := os.DirFS(repoDir)
	noRegion := prodCluster()
	noRegion.Labels = map[string]string{"fleet": "yes"}
	cases := []struct {
		profile string
		cluster ClusterFacts
		want    string
		file    string
		line    int
		is      error
	}{{
		profile: "missing-key", cluster: prodCluster(),
		want: `profile missing-key: addon needs-region: addons/missing-key/configmap.yaml:7: template: missing key "region" at <.Cluster.Values.region>`,
		file: "addons/missing-key/configmap.yaml", line: 7,
	}, {
		profile: "missing-path-key", cluster: noRegion,
		want: `profile missing-path-key: addon by-region: profiles/missing-path-key.yaml:9: spec.addons[0].manifests.path: template: missing key "region" at <.Cluster.Labels.region>`,
		file: "profiles/missing-path-key.yaml", line: 9,
	}, {
		profile: "broken-kustomize", cluster: prodCluster(),
		want: `profile broken-kustomize: addon broken: addons/broken-kustomize/kustomization.yaml:5: kustomize: resource 'does-not-exist.yaml': addons/broken-kustomize/does-not-exist.yaml does not exist`,
		file: "addons/broken-kustomize/kustomization.yaml", line: 5,
	}, {
		profile: "remote", cluster: prodCluster(),
		want: `profile remote: addon remote: addons/remote/kustomization.yaml:5: "github.com/example/fleet//addons/app/base?ref=v1.0.0" is remote: remote bases and files are disabled`,
		file: "addons/remote/kustomization.yaml", line: 5, is: ErrRemoteRefused,
	}, {
		profile: "nokind", cluster: prodCluster(),
		want: `profile nokind: addon nokind: addons/nokind/objects.yaml:6: document has no kind`,
		file: "addons/nokind/objects.yaml", line: 6,
	}}
	r := New(Options{})
	for _, c := range cases {
		t.Run(c.profile, func(t *testing.T) {
			_, err := r.Render(context.Background(), request(t, fsys, c.profile, c.cluster))
			assertError(t, err, c.profile, c.want, c.file, c.line)
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, c.is)
			}
		})
	}
}

func assertError(t *testing.T, err error, profile, want, file string, line int) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error\n  %v\nwant it to contain\n  %s", err, want)
	}
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("error %T is not an *Error", err)
	}
	if re.Profile != profile || re.File != file || re.Line != line {
		t.Errorf("located at profile %q file %q line %d, want %q %q %d", re.Profile, re.File, re.Line, profile, file, line)
	}
}
