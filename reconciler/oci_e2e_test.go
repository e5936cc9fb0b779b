package reconciler

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/internal/chartserver"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/oci"
)

// pushOCIApp pushes a Flux artifact whose kustomization makes ConfigMap
// name with data version.
func pushOCIApp(t *testing.T, reg *chartserver.OCI, name, version string) string {
	t.Helper()
	layer := chartserver.TarGz(t, map[string]string{
		"app/kustomization.yaml": "resources: [cm.yaml]\n",
		"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\ndata: {version: '" + version + "'}\n",
	})
	return reg.PushArtifact(t, "fleet/"+name, version, "application/vnd.cncf.flux.config.v1+json", oci.FluxContentType, layer)
}

// TestOCIKustomizeAddonFollowsTags runs two OCI-sourced Kustomize add-ons
// through the daemon on a real cluster: the one with a semver range moves
// to a version pushed later, without a commit; the one pinned by digest
// stays put. The cluster's record on the status branch and its dashboard
// name the digest each pair's rendering was read from.
func TestOCIKustomizeAddonFollowsTags(t *testing.T) {
	ctx := context.Background()
	reg := chartserver.NewOCI(t)
	ranged1 := pushOCIApp(t, reg, "oci-ranged", "1.0.0")
	pinned := pushOCIApp(t, reg, "oci-pinned", "1.0.0")
	host := reg.Host()
	files := map[string]string{
		"profiles/ranged.yaml": profileYAML("ranged", "env: prod", "  addons:\n  - name: app\n    oci: {url: 'oci://"+host+"/fleet/oci-ranged', semver: '^1'}\n    kustomize: {path: app}\n"),
		"profiles/pinned.yaml": profileYAML("pinned", "env: prod", "  addons:\n  - name: app\n    oci: {url: 'oci://"+host+"/fleet/oci-pinned', digest: '"+pinned+"'}\n    kustomize: {path: app}\n"),
	}
	f := newFleetRepo(t)
	maps.Copy(files, clusterFiles(t, "c37", "env: prod"))
	f.Commit("fleet", files)
	h := newHarness(t, f, nil)
	h.r.opts.Renderer = render.New(render.Options{OCI: oci.New(oci.Options{PlainHTTP: true, TTL: time.Nanosecond})})
	res, _ := h.d.RunOnce(ctx)
	got := pairs(res, "c37")
	for _, p := range []string{"ranged", "pinned"} {
		if got[p].State != status.StateApplied {
			t.Fatalf("%s: %s %+v", p, got[p].State, got[p].Error)
		}
	}
	recordNames(t, f, "oci://"+host+"/fleet/oci-ranged@"+ranged1, "oci://"+host+"/fleet/oci-pinned@"+pinned)
	ranged2 := pushOCIApp(t, reg, "oci-ranged", "1.1.0")
	pushOCIApp(t, reg, "oci-pinned", "1.1.0")
	res, _ = h.d.RunOnce(ctx)
	got = pairs(res, "c37")
	if v := configMap(t, "c37", "default", "oci-ranged")["version"]; v != "1.1.0" || got["ranged"].State != status.StateApplied {
		t.Errorf("ranged after 1.1.0 was pushed: version %q, %s %+v", v, got["ranged"].State, got["ranged"].Error)
	}
	if v := configMap(t, "c37", "default", "oci-pinned")["version"]; v != "1.0.0" {
		t.Errorf("pinned after 1.1.0 was pushed: version %q", v)
	}
	recordNames(t, f, "oci://"+host+"/fleet/oci-ranged@"+ranged2, "oci://"+host+"/fleet/oci-pinned@"+pinned)
}

// recordNames checks that c37's record on the status branch names each
// artifact (url@digest) of an add-on "app", and the dashboard its digest.
func recordNames(t *testing.T, f *fleetRepo, artifacts ...string) {
	t.Helper()
	var rec status.ClusterStatus
	if err := yaml.Unmarshal([]byte(f.statusOf("c37")), &rec); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range rec.Profiles {
		for _, a := range p.Artifacts {
			if a.Addon == "app" {
				got = append(got, a.URL+"@"+a.Digest)
			}
		}
	}
	slices.Sort(got)
	artifacts = slices.Sorted(slices.Values(artifacts))
	if !slices.Equal(got, artifacts) {
		t.Errorf("record's artifacts: %q, want %q", got, artifacts)
	}
	dash := f.Lookup("regatta/status", "status/README.md")
	for _, a := range artifacts {
		_, d, _ := strings.Cut(a, "@")
		if !strings.Contains(dash, "app `"+status.ShortDigest(d)+"`") {
			t.Errorf("dashboard lacks %s:\n%s", status.ShortDigest(d), dash)
		}
	}
}
