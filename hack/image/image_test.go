package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildTags are hack/build-tags' tags, as make and the Dockerfile read them.
func buildTags(t *testing.T) string {
	data, err := os.ReadFile("../build-tags")
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for line := range strings.Lines(string(data)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			tags = append(tags, line)
		}
	}
	return strings.Join(tags, ",")
}

// TestImage builds regatta for this machine's architecture, builds the
// image twice (same digest), checks its configuration and runs
// `regatta version` from its unpacked root filesystem, chrooted, as the
// image's user: so the binary is static and the user can run it.
func TestImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "regatta")
	start := time.Now()
	gobuild := exec.Command("go", "build", "-o", bin, "-tags", buildTags(t), "-ldflags",
		"-s -w -X github.com/regatta-dev/regatta/cmd/regatta/app.version=v0.0.0-test"+
			" -X github.com/regatta-dev/regatta/cmd/regatta/app.commit=abc1234"+
			" -X github.com/regatta-dev/regatta/cmd/regatta/app.date=2026-01-02T03:04:05Z",
		"./cmd/regatta")
	gobuild.Dir = "../.."
	gobuild.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := gobuild.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("go build: %s", time.Since(start).Round(time.Millisecond))
	o := options{
		Platforms: []platformBinary{{OS: "linux", Arch: runtime.GOARCH, Binary: bin}},
		Passwd:    "rootfs/etc/passwd",
		Group:     "rootfs/etc/group",
		CACerts:   "/etc/ssl/certs/ca-certificates.crt",
		CASource:  caSource("/etc/ssl/certs/ca-certificates.crt"),
		Version:   "v0.0.0-test",
		Revision:  "abc1234",
		Source:    "https://github.com/regatta-dev/regatta",
		Created:   time.Unix(1767323045, 0).UTC(),
		Out:       filepath.Join(dir, "oci"),
		Archive:   filepath.Join(dir, "oci.tar"),
	}
	start = time.Now()
	digest, err := build(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image: %s (%s)", time.Since(start).Round(time.Millisecond), digest)
	o2 := o
	o2.Out, o2.Archive = filepath.Join(dir, "oci2"), filepath.Join(dir, "oci2.tar")
	if again, err := build(o2); err != nil || again != digest {
		t.Errorf("second build: %s, %v; want the same digest %s", again, err, digest)
	}
	if !sameFile(t, o.Archive, o2.Archive) {
		t.Error("the two archives differ")
	}
	cfg, layers := readImage(t, o.Out, digest)
	checkConfig(t, cfg)
	root := filepath.Join(dir, "rootfs")
	for _, l := range layers {
		unpack(t, filepath.Join(o.Out, "blobs", "sha256", strings.TrimPrefix(l, "sha256:")), root)
	}
	checkRootFS(t, root)
	runVersion(t, root, cfg)
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

func readJSON(t *testing.T, layout, digest string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(layout, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:")))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// readImage follows index.json to this platform's config and layers.
func readImage(t *testing.T, layout, digest string) (imageConfig, []string) {
	t.Helper()
	var top index
	data, err := os.ReadFile(filepath.Join(layout, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	if len(top.Manifests) != 1 || top.Manifests[0].Digest != digest || top.Manifests[0].MediaType != mediaIndex {
		t.Fatalf("index.json: %+v, want the image index %s", top.Manifests, digest)
	}
	var idx index
	readJSON(t, layout, digest, &idx)
	for _, m := range idx.Manifests {
		if m.Platform == nil || m.Platform.OS != "linux" || m.Platform.Architecture != runtime.GOARCH {
			continue
		}
		var man manifest
		readJSON(t, layout, m.Digest, &man)
		var cfg imageConfig
		readJSON(t, layout, man.Config.Digest, &cfg)
		var layers []string
		for _, l := range man.Layers {
			layers = append(layers, l.Digest)
		}
		return cfg, layers
	}
	t.Fatalf("no linux/%s image in %+v", runtime.GOARCH, idx.Manifests)
	return imageConfig{}, nil
}

func checkConfig(t *testing.T, cfg imageConfig) {
	t.Helper()
	if cfg.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", cfg.Config.User)
	}
	if strings.Join(cfg.Config.Entrypoint, " ") != "/usr/local/bin/regatta" {
		t.Errorf("entrypoint %q", cfg.Config.Entrypoint)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":   "https://github.com/regatta-dev/regatta",
		"org.opencontainers.image.revision": "abc1234",
		"org.opencontainers.image.version":  "v0.0.0-test",
	} {
		if got := cfg.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	if cfg.Created != "2026-01-02T03:04:05Z" {
		t.Errorf("created %s, want the -created time", cfg.Created)
	}
}

// unpack extracts a gzip-compressed layer (regular files and folders,
// which is all the image holds) into root.
func unpack(t *testing.T, blob, root string) {
	t.Helper()
	f, err := os.Open(blob)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, filepath.FromSlash(h.Name))
		mode := os.FileMode(h.Mode).Perm()
		if h.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, data, 0o600)
			}
		default:
			t.Fatalf("%s: unexpected tar entry type %c", h.Name, h.Typeflag)
		}
		if err == nil {
			err = os.Chmod(p, mode)
		}
		if err == nil {
			err = os.Lchown(p, h.Uid, h.Gid)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkRootFS: no shell, and the CA bundle holds certificates.
func checkRootFS(t *testing.T, root string) {
	t.Helper()
	for _, sh := range []string{"bin/sh", "bin/bash", "usr/bin/sh", "bin"} {
		if _, err := os.Lstat(filepath.Join(root, sh)); err == nil {
			t.Errorf("the image has /%s", sh)
		}
	}
	pem, err := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		t.Error("/etc/ssl/certs/ca-certificates.crt holds no certificate")
	}
}

// runVersion runs the image's entrypoint with `version` in root (chroot)
// as the image's user, with the image's environment.
func runVersion(t *testing.T, root string, cfg imageConfig) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("running the image's binary chrooted as its user needs root (chroot and setuid)")
	}
	cmd := exec.Command(cfg.Config.Entrypoint[0], "version")
	cmd.Path = cfg.Config.Entrypoint[0] // resolved inside the chroot
	cmd.Env, cmd.Dir = cfg.Config.Env, cfg.Config.WorkingDir
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot:     root,
		Credential: &syscall.Credential{Uid: uid, Gid: uid},
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("regatta version in the image: %v\n%s", err, out)
	}
	want := "regatta v0.0.0-test (commit abc1234, built 2026-01-02T03:04:05Z"
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("regatta version: %q, want %q...", out, want)
	}
}
