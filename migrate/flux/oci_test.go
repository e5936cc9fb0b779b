package flux

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/regatta-dev/regatta/internal/chartserver"
	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/render/oci"
	"github.com/regatta-dev/regatta/spec"
)

// TestOCIRepositoryKustomization: a Kustomization whose source is an
// OCIRepository becomes a kustomize add-on with an oci source (its URL,
// semver and interval), built from the artifact; the fields regatta does not carry are
// reported.
func TestOCIRepositoryKustomization(t *testing.T) {
	reg := chartserver.NewOCI(t)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-artifact, namespace: default}\n"
	layer := chartserver.TarGz(t, map[string]string{"deploy/cm.yaml": cm, "deploy/kustomization.yaml": "resources: [cm.yaml]\n"})
	reg.PushArtifact(t, "fleet/app", "1.2.0", "application/vnd.cncf.flux.config.v1+json", oci.FluxContentType, layer)
	url := "oci://" + reg.Host() + "/fleet/app"
	apps := `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: app, namespace: flux-system}
spec:
  url: ` + url + `
  ref: {semver: ">=1.0.0"}
  interval: 5m
  secretRef: {name: registry-creds}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system}
spec:
  path: ./deploy
  sourceRef: {kind: OCIRepository, name: app}
`
	fleet, report, err := Import(context.Background(), fstest.MapFS{
		"clusters/prod/flux-system/gotk-sync.yaml": {Data: []byte(nsSync)},
		"clusters/prod/app.yaml":                   {Data: []byte(apps)},
	}, Pull{OCI: oci.New(oci.Options{PlainHTTP: true})})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, p := range fleet.Profiles {
		for _, a := range p.Spec.Addons {
			if a.OCI != nil && a.Kustomize != nil {
				found = a.OCI.URL == url && a.OCI.Semver == ">=1.0.0" && a.OCI.Interval == "5m" && a.Kustomize.Path == "deploy"
			}
		}
	}
	var findings []string
	for _, f := range report.Findings() {
		findings = append(findings, f.String())
	}
	all := strings.Join(findings, "\n")
	if !found {
		t.Fatalf("no kustomize add-on from %s >=1.0.0 every 5m, path deploy: %+v\n%s", url, fleet.Profiles, all)
	}
	if !strings.Contains(all, "spec.secretRef: not carried over") {
		t.Errorf("report:\n%s", all)
	}
}

// ociFixture is a Flux repository whose Kustomization app takes ./deploy
// of the OCIRepository app (extra fields added to its spec), with the
// extra files given.
func ociFixture(url, repoSpec string, extra map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{
		"clusters/prod/flux-system/gotk-sync.yaml": {Data: []byte(nsSync)},
		"clusters/prod/app.yaml": {Data: []byte(`apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: app, namespace: flux-system}
spec:
  url: ` + url + `
  ref: {tag: "1.2.0"}
  interval: 5m
` + repoSpec + `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system}
spec:
  path: ./deploy
  sourceRef: {kind: OCIRepository, name: app}
`)},
	}
	for k, v := range extra {
		fsys[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return fsys
}

// pushApp pushes a Flux artifact with deploy/cm.yaml as fleet/app:1.2.0.
func pushApp(t *testing.T, reg *chartserver.OCI) string {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-artifact, namespace: default}\n"
	layer := chartserver.TarGz(t, map[string]string{"deploy/cm.yaml": cm, "deploy/kustomization.yaml": "resources: [cm.yaml]\n"})
	reg.PushArtifact(t, "fleet/app", "1.2.0", "application/vnd.cncf.flux.config.v1+json", oci.FluxContentType, layer)
	return "oci://" + reg.Host() + "/fleet/app"
}

// kustomizeOCIAddon returns the imported kustomize add-on with an oci
// source, failing the test when there is none.
func kustomizeOCIAddon(t *testing.T, fleet *migrate.Fleet, findings string) spec.Addon {
	t.Helper()
	for _, p := range fleet.Profiles {
		for _, a := range p.Spec.Addons {
			if a.OCI != nil && a.Kustomize != nil {
				return a
			}
		}
	}
	t.Fatalf("no kustomize add-on with an oci source: %+v\n%s", fleet.Profiles, findings)
	return spec.Addon{}
}

func findingsOf(r *migrate.Report) string {
	var out []string
	for _, f := range r.Findings() {
		out = append(out, f.String())
	}
	return strings.Join(out, "\n")
}

// TestOCIUnreachableRegistryCarriedUnbuilt: a Kustomization whose
// registry cannot be reached (or with --offline, is not asked) is still
// carried over as a kustomize add-on with its oci source, and the report
// says it was not built and what that leaves out.
func TestOCIUnreachableRegistryCarriedUnbuilt(t *testing.T) {
	gone := chartserver.NewOCI(t)
	url := pushApp(t, gone)
	gone.Close()
	live := chartserver.NewOCI(t)
	liveURL := pushApp(t, live)
	for _, tc := range []struct {
		name string
		url  string
		pull Pull
		want string
	}{
		{"unreachable", url, Pull{OCI: oci.New(oci.Options{PlainHTTP: true})}, "the artifact could not be pulled or built ("},
		{"offline", liveURL, Pull{OCI: oci.New(oci.Options{PlainHTTP: true}), Offline: true}, "not pulled (--offline)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fleet, report, err := Import(context.Background(), ociFixture(tc.url, "", nil), tc.pull)
			if err != nil {
				t.Fatal(err)
			}
			all := findingsOf(report)
			a := kustomizeOCIAddon(t, fleet, all)
			if a.OCI.URL != tc.url || a.OCI.Tag != "1.2.0" || a.OCI.Interval != "5m" || a.Kustomize.Path != "deploy" {
				t.Errorf("add-on %+v %+v", a.OCI, a.Kustomize)
			}
			want := "clusters/prod/app.yaml:14: spec.sourceRef: Kustomization app: " + tc.want
			if !strings.Contains(all, want) || !strings.Contains(all, "unbuilt: Kustomizations and HelmReleases inside the artifact are not converted") {
				t.Errorf("report lacks %q:\n%s", want, all)
			}
			if strings.Contains(all, "kustomize build of") {
				t.Errorf("reported as a failed build:\n%s", all)
			}
		})
	}
	if n := live.Requests.Load(); n != 0 {
		t.Errorf("--offline asked the registry %d times", n)
	}
}

// TestOCIPrivateRegistry: a registry that needs basic authentication.
// With the OCIRepository's secretRef Secret in the repository, the
// secretRef is carried as oci.secretRef and the import logs in with it to
// build the artifact; without it, the Kustomization is carried unbuilt
// and the report says what to write. provider: aws is reported with why.
// The password never reaches the report.
func TestOCIPrivateRegistry(t *testing.T) {
	reg := chartserver.NewOCI(t)
	url := pushApp(t, reg)
	reg.Login = "fleet:s3cret-pass"
	auth := base64.StdEncoding.EncodeToString([]byte(reg.Login))
	secret := `apiVersion: v1
kind: Secret
metadata: {name: registry-creds, namespace: flux-system}
type: kubernetes.io/dockerconfigjson
stringData:
  .dockerconfigjson: '{"auths": {"` + reg.Host() + `": {"auth": "` + auth + `"}}}'
`
	pull := Pull{OCI: oci.New(oci.Options{PlainHTTP: true})}

	t.Run("secret in the repository", func(t *testing.T) {
		fleet, report, err := Import(context.Background(), ociFixture(url, "  secretRef: {name: registry-creds}\n",
			map[string]string{"clusters/prod/registry.yaml": secret}), pull)
		if err != nil {
			t.Fatal(err)
		}
		all := findingsOf(report)
		a := kustomizeOCIAddon(t, fleet, all)
		want := spec.OCISecretRef{Name: "registry-creds", Path: "clusters/{{ .Cluster.Name }}/registry.yaml"}
		if a.OCI.SecretRef == nil || *a.OCI.SecretRef != want {
			t.Errorf("oci.secretRef = %+v, want %+v", a.OCI.SecretRef, want)
		}
		for _, w := range []string{
			"clusters/prod/app.yaml:8: spec.secretRef: carried over as oci.secretRef: the registry login is Secret registry-creds in clusters/{{ .Cluster.Name }}/registry.yaml",
			"spec.sourceRef: Kustomization app: built from artifact " + url + " as pulled now (1 objects)",
		} {
			if !strings.Contains(all, w) {
				t.Errorf("report lacks %q:\n%s", w, all)
			}
		}
		if strings.Contains(all, "could not be pulled") || strings.Contains(all, "s3cret") {
			t.Errorf("report:\n%s", all)
		}
	})
	t.Run("secret elsewhere, cloud provider", func(t *testing.T) {
		fleet, report, err := Import(context.Background(), ociFixture(url, "  secretRef: {name: registry-creds}\n  provider: aws\n", nil), pull)
		if err != nil {
			t.Fatal(err)
		}
		all := findingsOf(report)
		a := kustomizeOCIAddon(t, fleet, all)
		if a.OCI.SecretRef != nil || a.Kustomize.Path != "deploy" {
			t.Errorf("add-on %+v %+v", a.OCI, a.Kustomize)
		}
		for _, w := range []string{
			"clusters/prod/app.yaml:8: spec.secretRef: not carried over: Secret flux-system/registry-creds is not in this repository; regatta logs in with a kubernetes.io/dockerconfigjson Secret manifest",
			"clusters/prod/app.yaml:9: spec.provider: provider aws is not carried over: regatta's oci add-on logs in to a registry only with a dockerconfigjson Secret",
			"spec.sourceRef: Kustomization app: the artifact could not be pulled or built (",
		} {
			if !strings.Contains(all, w) {
				t.Errorf("report lacks %q:\n%s", w, all)
			}
		}
	})
}

// TestOCIStalledRegistryBounded: a registry that accepts the connection
// and never answers does not hold the import: past Pull.Timeout the
// Kustomization is carried over unbuilt, and the report says so.
func TestOCIStalledRegistryBounded(t *testing.T) {
	release := make(chan struct{})
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(stalled.Close)
	t.Cleanup(func() { close(release) })
	url := "oci://" + strings.TrimPrefix(stalled.URL, "http://") + "/fleet/app"
	start := time.Now()
	fleet, report, err := Import(context.Background(), ociFixture(url, "", nil),
		Pull{OCI: oci.New(oci.Options{PlainHTTP: true}), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the import took %s", took)
	}
	all := findingsOf(report)
	kustomizeOCIAddon(t, fleet, all)
	if !strings.Contains(all, "spec.sourceRef: Kustomization app: the artifact was not pulled within 300ms: carried over as a kustomize add-on") {
		t.Errorf("report:\n%s", all)
	}
}
