package oci

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/chartserver"
	"github.com/regatta-dev/regatta/internal/refcli"
)

// orasVersion is the oras CLI the compatibility test pushes with.
const orasVersion = "v1.3.6"

// orasCLI returns $REGATTA_ORAS_CLI or the oras CLI built from the module
// proxy (refcli).
func orasCLI(t *testing.T) string {
	return refcli.Path(t, "REGATTA_ORAS_CLI", "oras", orasVersion, refcli.GoInstall("oras.land/oras/cmd/oras", orasVersion))
}

// TestOrasPushedArtifacts pushes a folder with the oras CLI three ways (a
// folder, a tar.gz file as an image layer, a tar.gz in Flux's media type
// as `flux push artifact` makes it) to an in-process registry, pulls each
// with Client and wants the folder's files back, file for file.
func TestOrasPushedArtifacts(t *testing.T) {
	oras := orasCLI(t)
	reg := chartserver.NewOCI(t)
	work := t.TempDir()
	want := map[string]string{
		"app/kustomization.yaml": "resources: [cm.yaml]\n",
		"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: pushed}\n",
		"app/sub/extra.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
	}
	for name, body := range want {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("tar", "czf", "app.tgz", "app")
	ref := func(repo string) string { return reg.Host() + "/fleet/" + repo + ":1.0.0" }
	run(oras, "push", "--plain-http", ref("folder"), "app")
	run(oras, "push", "--plain-http", ref("layer"), "app.tgz:application/vnd.oci.image.layer.v1.tar+gzip")
	run(oras, "push", "--plain-http", "--artifact-type", "application/vnd.cncf.flux.config.v1+json", ref("flux"), "app.tgz:"+FluxContentType)
	c := New(Options{PlainHTTP: true})
	ctx := context.Background()
	for _, repo := range []string{"folder", "layer", "flux"} {
		url := "oci://" + reg.Host() + "/fleet/" + repo
		d, err := c.Resolve(ctx, url, Selector{Semver: "~1.0"}, Credentials{})
		if err != nil {
			t.Fatalf("%s: %v", repo, err)
		}
		files, err := c.Pull(ctx, url, d, Credentials{})
		if err != nil {
			t.Fatalf("%s: %v", repo, err)
		}
		got := map[string]string{}
		err = fs.WalkDir(files, ".", func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			data, err := fs.ReadFile(files, p)
			got[p] = string(data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: files %v, want %v", repo, keys(got), keys(want))
		}
	}
}

func keys(m map[string]string) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return strings.Join(out, ",")
}
