package reconciler

import (
	"context"
	"testing"
	"time"

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
// stays put.
func TestOCIKustomizeAddonFollowsTags(t *testing.T) {
	ctx := context.Background()
	reg := chartserver.NewOCI(t)
	pushOCIApp(t, reg, "oci-ranged", "1.0.0")
	pinned := pushOCIApp(t, reg, "oci-pinned", "1.0.0")
	host := reg.Host()
	files := map[string]string{
		"profiles/ranged.yaml": profileYAML("ranged", "env: prod", "  addons:\n  - name: app\n    oci: {url: 'oci://"+host+"/fleet/oci-ranged', semver: '^1'}\n    kustomize: {path: app}\n"),
		"profiles/pinned.yaml": profileYAML("pinned", "env: prod", "  addons:\n  - name: app\n    oci: {url: 'oci://"+host+"/fleet/oci-pinned', digest: '"+pinned+"'}\n    kustomize: {path: app}\n"),
	}
	_, h := oneClusterFleet(t, files)
	h.r.opts.Renderer = render.New(render.Options{OCI: oci.New(oci.Options{PlainHTTP: true, TTL: time.Nanosecond})})
	res, _ := h.d.RunOnce(ctx)
	got := pairs(res, "c37")
	for _, p := range []string{"ranged", "pinned"} {
		if got[p].State != status.StateApplied {
			t.Fatalf("%s: %s %+v", p, got[p].State, got[p].Error)
		}
	}
	pushOCIApp(t, reg, "oci-ranged", "1.1.0")
	pushOCIApp(t, reg, "oci-pinned", "1.1.0")
	res, _ = h.d.RunOnce(ctx)
	got = pairs(res, "c37")
	if v := configMap(t, "c37", "default", "oci-ranged")["version"]; v != "1.1.0" || got["ranged"].State != status.StateApplied {
		t.Errorf("ranged after 1.1.0 was pushed: version %q, %s %+v", v, got["ranged"].State, got["ranged"].Error)
	}
	if v := configMap(t, "c37", "default", "oci-pinned")["version"]; v != "1.0.0" {
		t.Errorf("pinned after 1.1.0 was pushed: version %q", v)
	}
}
