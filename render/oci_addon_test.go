package render

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/chartserver"
	"github.com/regatta-dev/regatta/render/oci"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// pushApp pushes a Flux artifact holding a kustomization whose ConfigMap
// is named after the version.
func pushApp(t *testing.T, reg *chartserver.OCI, version string) string {
	layer := chartserver.TarGz(t, map[string]string{
		"app/kustomization.yaml": "resources: [cm.yaml]\n",
		"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-" + strings.ReplaceAll(version, ".", "-") + ", namespace: default}\n",
	})
	return reg.PushArtifact(t, "fleet/app", version, "application/vnd.cncf.flux.config.v1+json", oci.FluxContentType, layer)
}

// TestOCIKustomizeAddon renders a Kustomize add-on from an OCI artifact:
// a semver range moves to a newly pushed version without a commit, a
// pinned digest stays put, and the objects name the artifact's digest.
func TestOCIKustomizeAddon(t *testing.T) {
	reg := chartserver.NewOCI(t)
	d1 := pushApp(t, reg, "1.0.0")
	url := "oci://" + reg.Host() + "/fleet/app"
	profile := func(name, sel string) string {
		return "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n  clusterRefs: [prod-eu-1]\n  addons:\n  - name: app\n" +
			"    oci: {url: '" + url + "', " + sel + "}\n    kustomize: {path: app}\n"
	}
	dir := tenantTree(t, map[string]string{
		"profiles/jp.yaml": profile("jp", "semver: '^1'"),
		"profiles/tp.yaml": profile("tp", "digest: '"+d1+"'"),
	})
	r := New(Options{OCI: oci.New(oci.Options{PlainHTTP: true, TTL: time.Nanosecond})})
	render := func(profile string) Object {
		t.Helper()
		res := renderProfileTree(t, r, dir, profile)
		objs := res.Objects()
		if len(objs) != 1 {
			t.Fatalf("%s: %v", profile, objs)
		}
		return objs[0]
	}
	if o := render("jp"); o.GetName() != "app-1-0-0" || o.Source != url+"@"+d1+"//app/cm.yaml" {
		t.Fatalf("first: %s from %s", o.GetName(), o.Source)
	}
	d2 := pushApp(t, reg, "1.1.0")
	pushApp(t, reg, "2.0.0")
	if o := render("jp"); o.GetName() != "app-1-1-0" || o.Source != url+"@"+d2+"//app/cm.yaml" {
		t.Fatalf("after 1.1.0 was pushed: %s from %s", o.GetName(), o.Source)
	}
	if o := render("tp"); o.GetName() != "app-1-0-0" {
		t.Fatalf("pinned: %s", o.GetName())
	}
	// The result names the artifact and its digest, from the cache too.
	for range 2 {
		if a := renderProfileTree(t, r, dir, "jp").Artifacts; len(a) != 1 || a[0] != (Artifact{Addon: "app", URL: url, Digest: d2}) {
			t.Fatalf("jp artifacts: %+v", a)
		}
		if a := renderProfileTree(t, r, dir, "tp").Artifacts; len(a) != 1 || a[0].Digest != d1 {
			t.Fatalf("tp artifacts: %+v", a)
		}
	}
}

// renderProfileTree renders one platform profile of a tree for the
// production cluster.
func renderProfileTree(t *testing.T, r *Renderer, dir, profile string) *Result {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	repo, diags := spec.Load(root.FS())
	p := repo.Profile(profile)
	if p == nil {
		t.Fatalf("profile %s not loaded: %v", profile, diags)
	}
	res, err := r.Render(context.Background(), Request{FS: root.FS(), Profile: p, Cluster: prodCluster()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestOCIAddonLogsIn: an add-on whose registry wants a login pulls with
// the docker config of its secretRef, and fails without it; the error
// shows no credential.
func TestOCIAddonLogsIn(t *testing.T) {
	reg := chartserver.NewOCI(t)
	pushApp(t, reg, "1.0.0")
	reg.Login = "robot:s3cret"
	url := "oci://" + reg.Host() + "/fleet/app"
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: registry}\ntype: kubernetes.io/dockerconfigjson\nstringData:\n  .dockerconfigjson: '{\"auths\": {\"" +
		reg.Host() + "\": {\"username\": \"robot\", \"password\": \"s3cret\"}}}'\n"
	profile := func(name, extra string) string {
		return "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n  clusterRefs: [prod-eu-1]\n  addons:\n  - name: app\n" +
			"    oci: {url: '" + url + "', tag: 1.0.0" + extra + "}\n    kustomize: {path: app}\n"
	}
	dir := tenantTree(t, map[string]string{
		"profiles/jp.yaml":      profile("jp", ", secretRef: {name: registry, path: secrets/registry.yaml}"),
		"profiles/anon.yaml":    profile("anon", ""),
		"secrets/registry.yaml": secret,
	})
	r := New(Options{OCI: oci.New(oci.Options{PlainHTTP: true})})
	if o := renderProfileTree(t, r, dir, "jp").Objects(); len(o) != 1 || o[0].GetName() != "app-1-0-0" {
		t.Fatalf("with the login: %v", o)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	repo, _ := spec.Load(root.FS())
	_, err = r.Render(context.Background(), Request{FS: root.FS(), Profile: repo.Profile("anon"), Cluster: prodCluster()})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("without the login: %v", err)
	}
}

// TestOCICredentialsDecryptedOncePerContent: the SOPS-encrypted registry
// Secret of an OCI add-on is decrypted once for its content, not at every
// cache-key computation (each cluster, each pass); new content is read.
func TestOCICredentialsDecryptedOncePerContent(t *testing.T) {
	reg := chartserver.NewOCI(t)
	pushApp(t, reg, "1.0.0")
	reg.Login = "robot:s3cret"
	keys := testKeyring(t, "age.key")
	secret := func(password string) string {
		plain := "apiVersion: v1\nkind: Secret\nmetadata: {name: registry}\ntype: kubernetes.io/dockerconfigjson\nstringData:\n  .dockerconfigjson: '{\"auths\": {\"" +
			reg.Host() + "\": {\"username\": \"robot\", \"password\": \"" + password + "\"}}}'\n"
		enc, err := sops.Encrypt("secrets/registry.yaml", []byte(plain), sops.SecretRegex, keys.Recipients())
		if err != nil {
			t.Fatal(err)
		}
		return string(enc)
	}
	dir := tenantTree(t, map[string]string{
		"profiles/jp.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: jp}\nspec:\n  clusterRefs: [prod-eu-1]\n  addons:\n  - name: app\n" +
			"    oci: {url: 'oci://" + reg.Host() + "/fleet/app', semver: '^1', secretRef: {name: registry, path: secrets/registry.yaml}}\n    kustomize: {path: app}\n",
		"secrets/registry.yaml": secret("s3cret"),
	})
	r := New(Options{OCI: oci.New(oci.Options{PlainHTTP: true}), Keys: keys})
	renderAll := func() error {
		root, err := os.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		repo, _ := spec.Load(root.FS())
		for i := range 5 {
			facts := prodCluster()
			facts.Name = fmt.Sprintf("prod-%d", i)
			if _, err := r.Render(context.Background(), Request{FS: root.FS(), Profile: repo.Profile("jp"), Cluster: facts}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := renderAll(); err != nil {
		t.Fatal(err)
	}
	if n := r.cache.decrypts.Load(); n != 1 {
		t.Errorf("5 renders of one Secret: %d decryptions, want 1", n)
	}
	if err := os.WriteFile(dir+"/secrets/registry.yaml", []byte(secret("wrong")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := renderAll(); err == nil || strings.Contains(err.Error(), "wrong") {
		t.Errorf("with the new, wrong password: %v", err)
	}
	if n := r.cache.decrypts.Load(); n != 2 {
		t.Errorf("after the Secret changed: %d decryptions, want 2", n)
	}
}

// TestOCIAddonVerifiesCosignSignature: an add-on with oci.verify renders
// only an artifact signed with its key (inline or in a Secret's .pub key);
// an unsigned version fails the pair and names the missing signature.
func TestOCIAddonVerifiesCosignSignature(t *testing.T) {
	reg := chartserver.NewOCI(t)
	d1 := pushApp(t, reg, "1.0.0")
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	reg.SignCosign(t, "fleet/app", d1, d1, key)
	pub := chartserver.CosignPublicKey(t, key)
	url := "oci://" + reg.Host() + "/fleet/app"
	profile := func(name, verify string) string {
		return "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n  clusterRefs: [prod-eu-1]\n  addons:\n  - name: app\n" +
			"    oci:\n      url: '" + url + "'\n      semver: '^1'\n      verify: " + verify + "\n    kustomize: {path: app}\n"
	}
	inline, _ := json.Marshal(map[string]string{"publicKey": pub})
	pubJSON, _ := json.Marshal(pub)
	dir := tenantTree(t, map[string]string{
		"profiles/inline.yaml": profile("inline", string(inline)),
		"profiles/ref.yaml":    profile("ref", "{publicKeySecretRef: {name: cosign, path: secrets/cosign.yaml}}"),
		"secrets/cosign.yaml":  "apiVersion: v1\nkind: Secret\nmetadata: {name: cosign}\nstringData:\n  cosign.pub: " + string(pubJSON) + "\n",
	})
	r := New(Options{OCI: oci.New(oci.Options{PlainHTTP: true, TTL: time.Nanosecond})})
	for _, p := range []string{"inline", "ref"} {
		if o := renderProfileTree(t, r, dir, p).Objects(); len(o) != 1 || o[0].GetName() != "app-1-0-0" {
			t.Fatalf("%s, signed: %v", p, o)
		}
	}
	pushApp(t, reg, "1.1.0") // not signed
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	repo, _ := spec.Load(root.FS())
	for _, p := range []string{"inline", "ref"} {
		_, err := r.Render(context.Background(), Request{FS: root.FS(), Profile: repo.Profile(p), Cluster: prodCluster()})
		if err == nil || !strings.Contains(err.Error(), "spec.addons[0].oci.verify") || !errors.Is(err, oci.ErrNoSignature) {
			t.Errorf("%s, unsigned 1.1.0: %v", p, err)
		}
	}
}

// TestOCIArtifactSymlinks pushes artifacts holding symlinks to the
// in-process registry: links inside the artifact are followed as the
// repository's own are (a file linked from another folder, a linked
// folder), and a link out of the artifact, relative or absolute, fails
// the add-on with an error naming the link.
func TestOCIArtifactSymlinks(t *testing.T) {
	reg := chartserver.NewOCI(t)
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\n"
	}
	push := func(tag string, links map[string]string) {
		files := map[string]string{"app/cm.yaml": cm("app"), "shared/cm.yaml": cm("shared"), "shared/more/cm.yaml": cm("more")}
		for k, v := range links {
			files[k] = "->" + v
		}
		reg.PushArtifact(t, "fleet/links", tag, "application/vnd.cncf.flux.config.v1+json", oci.FluxContentType, chartserver.TarGz(t, files))
	}
	push("inside", map[string]string{"app/linked.yaml": "../shared/cm.yaml", "app/more": "../shared/more"})
	push("outside", map[string]string{"app/evil.yaml": "../../etc/passwd"})
	push("absolute", map[string]string{"app/evil.yaml": "/etc/passwd"})
	url := "oci://" + reg.Host() + "/fleet/links"
	files := map[string]string{}
	for _, tag := range []string{"inside", "outside", "absolute"} {
		files["profiles/"+tag+".yaml"] = "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + tag + "}\nspec:\n  clusterRefs: [prod-eu-1]\n  addons:\n  - name: app\n" +
			"    oci: {url: '" + url + "', tag: " + tag + "}\n    manifests: {path: app}\n"
	}
	dir := tenantTree(t, files)
	r := New(Options{OCI: oci.New(oci.Options{PlainHTTP: true})})
	var names []string
	for _, o := range renderProfileTree(t, r, dir, "inside").Objects() {
		names = append(names, o.GetName())
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"app", "more", "shared"}) {
		t.Fatalf("objects through links inside the artifact: %v", names)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	repo, _ := spec.Load(root.FS())
	for tag, target := range map[string]string{"outside": "../../etc/passwd", "absolute": "/etc/passwd"} {
		_, err := r.Render(context.Background(), Request{FS: root.FS(), Profile: repo.Profile(tag), Cluster: prodCluster()})
		want := "symlink app/evil.yaml points to " + target + ", outside the artifact"
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, oci.ErrUnsafePath) {
			t.Errorf("%s: got %v\nwant %s", tag, err, want)
		}
	}
}

// TestOCIInterval: an add-on's oci.interval is how long its tag's
// resolution is reused. With a client that sets no cap, a tag moved in
// the registry is seen at once by an add-on whose interval is a
// millisecond, and not by one with the default (a minute).
func TestOCIInterval(t *testing.T) {
	reg := chartserver.NewOCI(t)
	push := func(repo, name string) string {
		layer := chartserver.TarGz(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\n"})
		return reg.PushArtifact(t, repo, "stable", "application/vnd.cncf.flux.config.v1+json", oci.FluxContentType, layer)
	}
	profile := func(name, repo, extra string) string {
		return "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n  clusterRefs: [prod-eu-1]\n  addons:\n  - name: app\n" +
			"    oci: {url: 'oci://" + reg.Host() + "/" + repo + "', tag: stable" + extra + "}\n    manifests: {path: app}\n"
	}
	dir := tenantTree(t, map[string]string{
		"profiles/fast.yaml": profile("fast", "fleet/fast", ", interval: 1ms"),
		"profiles/slow.yaml": profile("slow", "fleet/slow", ""),
	})
	r := New(Options{OCI: oci.New(oci.Options{PlainHTTP: true})})
	digest := func(profile string) string {
		t.Helper()
		a := renderProfileTree(t, r, dir, profile).Artifacts
		if len(a) != 1 {
			t.Fatalf("%s: artifacts %v", profile, a)
		}
		return a[0].Digest
	}
	fast1, slow1 := push("fleet/fast", "one"), push("fleet/slow", "one")
	if digest("fast") != fast1 || digest("slow") != slow1 {
		t.Fatal("first resolution")
	}
	fast2, _ := push("fleet/fast", "two"), push("fleet/slow", "two")
	resolvedAt := time.Now()
	for digest("fast") != fast2 { // a millisecond has passed by the second try
		if time.Since(resolvedAt) > 30*time.Second {
			t.Fatal("the 1ms interval never resolved the moved tag")
		}
	}
	if d := digest("slow"); d != slow1 && time.Since(resolvedAt) < oci.DefaultInterval {
		t.Fatalf("the default interval resolved the tag again within %s", time.Since(resolvedAt))
	}
}
