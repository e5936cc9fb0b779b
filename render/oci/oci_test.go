package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/chartserver"
	"github.com/regatta-dev/regatta/render/netpolicy"
)

func cm(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n"
}

// TestResolveAndPull pushes Flux artifacts and a plain tar.gz to an
// in-process registry and selects them by tag, semver range and digest,
// through the URL policy's client.
func TestResolveAndPull(t *testing.T) {
	reg := chartserver.NewOCI(t)
	digests := map[string]string{}
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		layer := chartserver.TarGz(t, map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": cm("v" + v)})
		digests[v] = reg.PushArtifact(t, "fleet/app", v, "application/vnd.cncf.flux.config.v1+json", FluxContentType, layer)
	}
	plain := reg.PushArtifact(t, "fleet/plain", "latest", "application/vnd.oci.empty.v1+json", LayerTarGzip, chartserver.TarGz(t, map[string]string{"./cm.yaml": cm("plain")}))
	url := "oci://" + reg.Host() + "/fleet/app"
	policy := &netpolicy.Policy{AllowPrefixes: []string{reg.URL + "/"}}
	c := New(Options{HTTPClient: policy.Client(), PlainHTTP: true})
	ctx := context.Background()
	for _, tc := range []struct {
		sel  Selector
		want string
	}{
		{Selector{Tag: "1.0.0"}, "1.0.0"},
		{Selector{Semver: "~1.0 || ^1.1"}, "1.1.0"},
		{Selector{Semver: ">=1.0.0"}, "2.0.0"},
		{Selector{Digest: digests["1.0.0"]}, "1.0.0"},
	} {
		d, err := c.Resolve(ctx, url, tc.sel, Credentials{})
		if err != nil || d != digests[tc.want] {
			t.Fatalf("%+v: %s %v, want %s", tc.sel, d, err, digests[tc.want])
		}
		files, err := c.Pull(ctx, url, d, Credentials{})
		if err != nil {
			t.Fatal(err)
		}
		if data, err := fs.ReadFile(files, "app/cm.yaml"); err != nil || !strings.Contains(string(data), "v"+tc.want) {
			t.Fatalf("%+v: %q %v", tc.sel, data, err)
		}
	}
	files, err := c.Pull(ctx, "oci://"+reg.Host()+"/fleet/plain", plain, Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := fs.ReadFile(files, "cm.yaml"); !strings.Contains(string(data), "plain") {
		t.Fatalf("plain artifact: %q", data)
	}
	if _, err := c.Resolve(ctx, url, Selector{Semver: "^3"}, Credentials{}); err == nil || !strings.Contains(err.Error(), `no tag matches "^3"`) {
		t.Fatalf("no match: %v", err)
	}
	refused := New(Options{HTTPClient: (&netpolicy.Policy{}).Client(), PlainHTTP: true})
	if _, err := refused.Resolve(ctx, url, Selector{Tag: "1.0.0"}, Credentials{}); !errors.Is(err, netpolicy.ErrRefused) {
		t.Fatalf("a loopback registry outside the allow list: %v", err)
	}
}

// TestExtractRefusesEscapes: an archive entry climbing out of the
// artifact fails the pull.
func TestExtractRefusesEscapes(t *testing.T) {
	for _, name := range []string{"../x.yaml", "/etc/x.yaml", "a/../../x.yaml"} {
		if _, err := extract(chartserver.TarGz(t, map[string]string{name: "x"}), 1<<20); !errors.Is(err, ErrUnsafePath) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := extract(chartserver.TarGz(t, map[string]string{"big": strings.Repeat("x", 2048)}), 1024); err == nil {
		t.Error("an archive past the size bound was extracted")
	}
}

// TestCredentials: a registry that wants a login serves with the docker
// config's credentials only; an artifact pulled with them is not handed
// to a pull without them.
func TestCredentials(t *testing.T) {
	reg := chartserver.NewOCI(t)
	d := reg.PushArtifact(t, "private/app", "1.0.0", "application/vnd.cncf.flux.config.v1+json", FluxContentType, chartserver.TarGz(t, map[string]string{"cm.yaml": cm("private")}))
	reg.Login = "robot:s3cret"
	url := "oci://" + reg.Host() + "/private/app"
	for _, config := range []string{
		`{"auths": {"` + reg.Host() + `": {"username": "robot", "password": "s3cret"}}}`,
		`{"auths": {"http://` + reg.Host() + `/": {"auth": "cm9ib3Q6czNjcmV0"}}}`,
	} {
		cr, err := DockerConfigCredentials([]byte(config), url)
		if err != nil || cr != (Credentials{Username: "robot", Password: "s3cret"}) {
			t.Fatalf("%s: %+v %v", config, cr, err)
		}
	}
	if _, err := DockerConfigCredentials([]byte(`{"auths": {"other.example": {"auth": "eDp5"}}}`), url); err == nil {
		t.Error("credentials of another registry were used")
	}
	c := New(Options{PlainHTTP: true})
	ctx := context.Background()
	if _, err := c.Resolve(ctx, url, Selector{Tag: "1.0.0"}, Credentials{}); err == nil {
		t.Fatal("an anonymous resolve succeeded")
	}
	login := Credentials{Username: "robot", Password: "s3cret"}
	got, err := c.Resolve(ctx, url, Selector{Tag: "1.0.0"}, login)
	if err != nil || got != d {
		t.Fatalf("resolve with the login: %s %v", got, err)
	}
	if _, err := c.Pull(ctx, url, d, login); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pull(ctx, url, d, Credentials{}); err == nil {
		t.Fatal("an anonymous pull of the digest was served from the cache")
	}
}

// TestExtractHardLinks: a hard link to a file earlier in the archive
// reads as that file; one to anything else fails the pull naming it.
func TestExtractHardLinks(t *testing.T) {
	archive := func(link string) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(tw.WriteHeader(&tar.Header{Name: "a/cm.yaml", Mode: 0o644, Size: 2, Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte("x\n"))
		must(err)
		must(tw.WriteHeader(&tar.Header{Name: "b/cm.yaml", Linkname: link, Typeflag: tar.TypeLink}))
		must(tw.Close())
		must(zw.Close())
		return buf.Bytes()
	}
	files, err := extract(archive("a/cm.yaml"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := fs.ReadFile(files, "b/cm.yaml"); err != nil || string(b) != "x\n" {
		t.Fatalf("hard link: %q %v", b, err)
	}
	for _, link := range []string{"../etc/passwd", "a", "a/missing.yaml"} {
		if _, err := extract(archive(link), 1<<20); !errors.Is(err, ErrUnsafePath) || !strings.Contains(err.Error(), "hard link b/cm.yaml names "+link) {
			t.Errorf("%s: %v", link, err)
		}
	}
}
