package render

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/render/netpolicy"
	"github.com/regatta-dev/regatta/spec"
)

// escapeRepo is a copy of the test repository on disk with symlinks that
// lead outside it, next to a folder outside holding a secret.
func escapeRepo(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	outside := filepath.Join(top, "outside")
	must(t, os.MkdirAll(outside, 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "secret.yaml"),
		[]byte("apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\n"), 0o644))
	root := filepath.Join(top, "repo")
	must(t, os.CopyFS(root, os.DirFS(repoDir)))
	must(t, os.Symlink("../../outside", filepath.Join(root, "addons", "escape")))
	kdir := filepath.Join(root, "addons", "escape-kustomize")
	must(t, os.MkdirAll(kdir, 0o755))
	must(t, os.WriteFile(filepath.Join(kdir, "kustomization.yaml"), []byte("resources:\n- secret.yaml\n"), 0o644))
	must(t, os.Symlink("../../../outside/secret.yaml", filepath.Join(kdir, "secret.yaml")))
	// A symlink that stays inside the repository is followed.
	must(t, os.Symlink("../app/base/service.yaml", filepath.Join(root, "addons", "plain", "linked.yaml")))
	return root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// withSource returns a copy of a profile whose first add-on has a new source.
func withSource(p *spec.Profile, a spec.Addon) *spec.Profile {
	cp := *p
	cp.Spec.Addons = []spec.Addon{a}
	cp.Spec.Overlays = nil
	return &cp
}

func TestSymlinkEscapeRefused(t *testing.T) {
	root := escapeRepo(t)
	fsys := os.DirFS(root)
	base := loadProfile(t, fsys, "plain")
	r := New(Options{})
	for _, a := range []spec.Addon{
		{Name: "escape", Manifests: &spec.ManifestsSource{Path: "addons/escape"}},
		{Name: "escape", Manifests: &spec.ManifestsSource{Path: "addons/escape/secret.yaml"}},
		{Name: "escape", Kustomize: &spec.KustomizeSource{Path: "addons/escape-kustomize"}},
	} {
		_, err := r.Render(context.Background(), Request{FS: fsys, Profile: withSource(base, a), Cluster: prodCluster()})
		if !errors.Is(err, spec.ErrPathEscapes) {
			t.Errorf("%+v: error %v, want spec.ErrPathEscapes", a, err)
		}
		if err != nil && strings.Contains(err.Error(), "stolen") {
			t.Errorf("error shows content from outside: %v", err)
		}
	}
	res, err := r.Render(context.Background(), Request{FS: fsys, Profile: base, Cluster: prodCluster()})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range res.Objects() {
		found = found || o.Source == "addons/plain/linked.yaml" && o.GetKind() == "Service" && o.GetName() == "app"
	}
	if !found {
		t.Errorf("a symlink inside the repository was not followed")
	}
}

func TestRemoteBases(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: remote}\n"))
	}))
	defer srv.Close()
	fsys := memRepo(t)
	fsys["addons/http/kustomization.yaml"] = &fstest.MapFile{Data: []byte("resources:\n- " + srv.URL + "/cm.yaml\n")}
	prof := withSource(loadProfile(t, fsys, "plain"), spec.Addon{Name: "http", Kustomize: &spec.KustomizeSource{Path: "addons/http"}})
	req := Request{FS: fsys, Profile: prof, Cluster: prodCluster()}

	_, err := New(Options{}).Render(context.Background(), req)
	if !errors.Is(err, ErrRemoteRefused) || !strings.Contains(err.Error(), "addons/http/kustomization.yaml:2: ") {
		t.Errorf("remote file not refused by default: %v", err)
	}
	res, err := New(Options{AllowRemoteBases: true}).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if objs := res.Objects(); len(objs) != 1 || objs[0].GetName() != "remote" {
		t.Errorf("remote file with AllowRemoteBases: got %v", objs)
	}
	// The URL policy refuses the loopback server unless a prefix allows it.
	guarded := Options{AllowRemoteBases: true, CheckURL: (&netpolicy.Policy{}).Check}
	_, err = New(guarded).Render(context.Background(), req)
	if !errors.Is(err, netpolicy.ErrRefused) || !strings.Contains(err.Error(), "addons/http/kustomization.yaml:2: remote base: "+srv.URL+"/cm.yaml: 127.0.0.1 is a loopback address") {
		t.Errorf("loopback remote base: %v, want refused with file and line", err)
	}
	guarded.CheckURL = (&netpolicy.Policy{AllowPrefixes: []string{srv.URL + "/"}}).Check
	if _, err := New(guarded).Render(context.Background(), req); err != nil {
		t.Errorf("allowed prefix: %v", err)
	}
}

func TestIsRemoteRef(t *testing.T) {
	for ref, want := range map[string]bool{
		"../base": false, "deployment.yaml": false, "github.com-mirror/x": false,
		"https://example.com/x.yaml":                       true,
		"github.com/org/repo//path?ref=v1":                 true,
		"git@github.com:org/repo.git":                      true,
		"ssh://git@example.com/org/repo.git":               true,
		"git::https://example.com/org/repo":                true,
		"file:///srv/repo":                                 true,
		"key=https://example.com/settings.properties":      true,
		"apiVersion: v1\nkind: X\nmetadata: {name: a@b:c}": false,
	} {
		if got := isRemoteRef(ref); got != want {
			t.Errorf("isRemoteRef(%q) = %v, want %v", ref, got, want)
		}
	}
}

// TestRemoteGitBaseAllowed clones a base from a local Git repository
// (file://) with AllowRemoteBases, and counts it as remote content.
func TestRemoteGitBaseAllowed(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for remote kustomize bases:", err)
	}
	src := t.TempDir()
	must(t, os.CopyFS(filepath.Join(src, "base"), os.DirFS(filepath.Join(repoDir, "addons", "app", "base"))))
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	kus := "resources:\n- file://" + src + "//base?ref=main\n"
	a := spec.Addon{Name: "git", Kustomize: &spec.KustomizeSource{Path: "x", TargetNamespace: "from-git"}}
	if _, err := adhoc(t, Options{}, map[string]string{"x/kustomization.yaml": kus}, a); !errors.Is(err, ErrRemoteRefused) {
		t.Errorf("git base not refused by default: %v", err)
	}
	res, err := adhoc(t, Options{AllowRemoteBases: true}, map[string]string{"x/kustomization.yaml": kus}, a)
	if err != nil {
		t.Fatal(err)
	}
	if objs := res.Objects(); len(objs) != 2 || objs[1].GetNamespace() != "from-git" {
		t.Errorf("objects from the git base: %v", objs)
	}
}
