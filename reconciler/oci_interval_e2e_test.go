package reconciler

import (
	"maps"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/chartserver"
	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/oci"
)

// TestOCITagMovesAtItsInterval: a running daemon with drift checks off
// brings a moved tag, and a new version in a semver range, to both
// clusters of their profiles within the add-on's interval plus a few
// seconds, with no commit; the registry is asked once per artifact and
// interval for the whole fleet, not once per cluster.
func TestOCITagMovesAtItsInterval(t *testing.T) {
	const interval = 3 * time.Second
	reg := chartserver.NewOCI(t)
	pushOCIApp(t, reg, "oci-moving", "1.0.0")
	move := func(version string) { // the tag stable moves to version's content
		layer := chartserver.TarGz(t, map[string]string{
			"app/kustomization.yaml": "resources: [cm.yaml]\n",
			"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: oci-moving, namespace: default}\ndata: {version: '" + version + "'}\n",
		})
		reg.PushArtifact(t, "fleet/oci-moving", "stable", "application/vnd.cncf.flux.config.v1+json", oci.FluxContentType, layer)
	}
	move("1.0.0")
	pushOCIApp(t, reg, "oci-range", "1.0.0")
	files := map[string]string{
		"profiles/moving.yaml": profileYAML("moving", "env: prod", "  addons:\n  - name: app\n    oci: {url: 'oci://"+reg.Host()+
			"/fleet/oci-moving', tag: stable, interval: "+interval.String()+"}\n    kustomize: {path: app}\n"),
		"profiles/range.yaml": profileYAML("range", "env: prod", "  addons:\n  - name: app\n    oci: {url: 'oci://"+reg.Host()+
			"/fleet/oci-range', semver: '^1', interval: "+interval.String()+"}\n    kustomize: {path: app}\n"),
	}
	maps.Copy(files, clusterFiles(t, "c35", "env: prod"))
	maps.Copy(files, clusterFiles(t, "c37", "env: prod"))
	f := newFleetRepo(t)
	f.Commit("fleet", files)
	commits := f.Commits("main")
	h := newHarness(t, f, func(o *DaemonOptions) { o.DriftInterval = 0 })
	h.r.opts.Renderer = render.New(render.Options{OCI: oci.New(oci.Options{PlainHTTP: true})})
	runDaemon(t, h)
	reaches := func(version string, timeout time.Duration) time.Duration {
		t.Helper()
		return testenv.WaitFor(t, timeout, "version "+version+" on c35 and c37", func() bool {
			for _, c := range []string{"c35", "c37"} {
				for _, cm := range []string{"oci-moving", "oci-range"} {
					if configMap(t, c, "default", cm)["version"] != version {
						return false
					}
				}
			}
			return true
		})
	}
	reaches("1.0.0", 60*time.Second)
	start, asked := time.Now(), reg.Resolutions.Load()
	for _, v := range []string{"1.1.0", "1.2.0"} {
		move(v)
		pushOCIApp(t, reg, "oci-range", v)
		took := reaches(v, interval+10*time.Second)
		t.Logf("tag moved and range grew to %s: on both clusters after %s (interval %s)", v, took.Round(100*time.Millisecond), interval)
	}
	elapsed, n := time.Since(start), reg.Resolutions.Load()-asked
	t.Logf("%d resolutions of the tag and the range in %s for 2 clusters", n, elapsed.Round(100*time.Millisecond))
	// One refresh per artifact at each interval come due, plus one of
	// slack for a timer late on a busy machine; one per cluster would be
	// twice that.
	if most := 2 * (int64(elapsed/interval) + 2); n > most {
		t.Errorf("%d resolutions of 2 artifacts in %s: more than one per artifact and interval of %s for the fleet (%d)", n, elapsed, interval, most)
	}
	if got := f.Commits("main"); got != commits {
		t.Errorf("%d commits on main, want %d: the tag must move without a commit", got, commits)
	}
}
