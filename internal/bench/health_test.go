package bench

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
)

func TestAvailablePollCheck(t *testing.T) {
	ok := *testenv.DeploymentWithStatus(1, 1, 3, 3, 3, corev1.ConditionTrue)
	other := ok
	other.Namespace = "hm-p00" // another method's
	items := []appsv1.Deployment{ok, ok, other}
	items[0].Namespace, items[1].Namespace = "hr-p00", "hr-p01"
	p := AvailablePoll{Prefix: "hr", Want: 2}
	if done, why := p.check(items); !done {
		t.Errorf("two Available: %s", why)
	}
	p.Want = 3
	if done, _ := p.check(items); done {
		t.Error("two of three counted done")
	}
	items[1] = *testenv.DeploymentWithStatus(2, 1, 3, 3, 3, corev1.ConditionTrue)
	items[1].Namespace = "hr-p01"
	p.Want = 2
	if done, why := p.check(items); done || !strings.Contains(why, "hr-p01/") {
		t.Errorf("an unobserved generation counted done (%q)", why)
	}
}

// TestFluxArtifact unpacks the artifact: folders before files, the files'
// contents, and the digest kustomize-controller checks.
func TestFluxArtifact(t *testing.T) {
	files := map[string]string{"b/c/x.yaml": "x: 1\n", "a.yaml": "a: 2\n", "b/y.yaml": "y: 3\n"}
	a, err := NewFluxArtifact(files)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(a.Data)
	if a.Digest != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("digest %s does not match the data", a.Digest)
	}
	if !strings.HasPrefix(a.Revision, "main@sha1:") || len(a.Revision) != len("main@sha1:")+40 {
		t.Errorf("revision %q", a.Revision)
	}
	gz, err := gzip.NewReader(bytes.NewReader(a.Data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	got := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Typeflag == tar.TypeReg {
			data, _ := io.ReadAll(tr)
			got[h.Name] = string(data)
		}
	}
	if want := "a.yaml b/ b/c/ b/c/x.yaml b/y.yaml"; strings.Join(names, " ") != want {
		t.Errorf("entries %q, want %q", strings.Join(names, " "), want)
	}
	for name, content := range files {
		if got[name] != content {
			t.Errorf("%s: %q, want %q", name, got[name], content)
		}
	}
	again, _ := NewFluxArtifact(files)
	if again.Digest != a.Digest {
		t.Error("the same tree packed twice differs")
	}
}

func TestKustomizationsReady(t *testing.T) {
	k := func(rev, ready string) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "k"},
			"status": map[string]any{"lastAppliedRevision": rev,
				"conditions": []any{map[string]any{"type": "Ready", "status": ready, "message": "m"}}}}}
	}
	if done, why := kustomizationsReady([]unstructured.Unstructured{k("r2", "True"), k("r2", "True")}, 2, "r2"); !done {
		t.Errorf("all Ready at r2: %s", why)
	}
	for name, items := range map[string][]unstructured.Unstructured{
		"old revision": {k("r2", "True"), k("r1", "True")},
		"not Ready":    {k("r2", "True"), k("r2", "False")},
		"one missing":  {k("r2", "True")},
	} {
		if done, _ := kustomizationsReady(items, 2, "r2"); done {
			t.Errorf("%s: counted done", name)
		}
	}
}

// TestHealthFleetRenders checks the health phase's fleet: every pair
// renders its 30 objects and a Deployment, and the Flux paths exist.
func TestHealthFleetRenders(t *testing.T) {
	f := Fleet{Style: StyleOverlays, Prefix: "t", Clusters: NewClusters(3), Profiles: 2, Replicas: HealthReplicas}
	files := f.Files()
	r := render.New(render.Options{Helm: helm.New(helm.Options{CacheDir: t.TempDir()})})
	_, err := PlanFleet(context.Background(), mapFS(files), "rev1", r, 2, func(c string, res []*render.Result) {
		for _, x := range res {
			deployments := 0
			for _, o := range x.Objects() {
				if o.GetKind() == "Deployment" {
					deployments++
				}
			}
			if n := len(x.Objects()); n != ObjectsPerProfile+1 || deployments != 1 {
				t.Errorf("cluster %s profile %s: %d objects, %d Deployments", c, x.Profile, n, deployments)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Clusters {
		path := strings.TrimPrefix(fluxPath(ProfileName(1), c), "./")
		if files[path+"/kustomization.yaml"] == "" || emptyPaths(f)[path+"/kustomization.yaml"] == "" {
			t.Errorf("cluster %s: no kustomization at %s", c.Name, path)
		}
	}
	if got := len(clustersOnly(files)); got != len(f.Clusters) {
		t.Errorf("clustersOnly: %d files, want %d (cluster.yaml of each)", got, len(f.Clusters))
	}
}
