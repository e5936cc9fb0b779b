package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
)

// TestFleetRenders checks the generator: every pair renders 30 objects
// and each profile has as many distinct renders as the kind promises.
func TestFleetRenders(t *testing.T) {
	repo, err := StartChartRepo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	f := Fleet{Prefix: "t", Clusters: NewClusters(6), Profiles: 10, ChartRepo: repo.URL()}
	r := render.New(render.Options{Helm: helm.New(helm.Options{CacheDir: t.TempDir()})})
	st, err := PlanFleet(context.Background(), mapFS(f.Files()), "rev1", r, 2, func(c string, res []*render.Result) {
		for _, x := range res {
			if n := len(x.Objects()); n != ObjectsPerProfile {
				t.Errorf("cluster %s profile %s: %d objects", c, x.Profile, n)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Pairs != 60 || st.Objects != 60*ObjectsPerProfile {
		t.Errorf("stats %+v", st)
	}
	// 3 plain profiles render once, 4 Kustomize and 3 Helm three times.
	if st.Misses != 3+7*3 {
		t.Errorf("misses = %d, want %d", st.Misses, 3+7*3)
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for q, want := range map[float64]float64{0: 1, 0.5: 3, 0.95: 4.8, 1: 5} {
		if got := Quantile(xs, q); got != want {
			t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
		}
	}
}

func TestParseRequests(t *testing.T) {
	in := `# HELP apiserver_request_total x
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 7
apiserver_request_total{code="200",component="apiserver",dry_run="All",group="",resource="configmaps",scope="resource",subresource="",verb="APPLY",version="v1"} 3
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="APPLY",version="v1"} 2
`
	rc, err := parseRequests(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if w, r := rc.Totals(); w != 2 || r != 10 {
		t.Errorf("writes %v reads %v", w, r)
	}
}

// TestFleetStylesRender checks the styled generators: every pair renders
// its objects, and renders are shared as the style promises: one per
// variant for overlays, templated paths and a template reading the
// variant label, one per cluster for a template reading the name.
func TestFleetStylesRender(t *testing.T) {
	for style, want := range map[string]uint64{
		StyleOverlays:       10 * 3,
		StyleTemplatedPaths: 10 * 3,
		StyleTemplateLabel:  10 * 3,
		StyleTemplateName:   10 * 6,
	} {
		f := Fleet{Style: style, Prefix: "t", Clusters: NewClusters(6), Profiles: 10}
		r := render.New(render.Options{})
		st, err := PlanFleet(context.Background(), mapFS(f.Files()), "rev1", r, 2, func(c string, res []*render.Result) {
			for _, x := range res {
				if n := len(x.Objects()); n != ObjectsPerProfile {
					t.Errorf("%s: cluster %s profile %s: %d objects", style, c, x.Profile, n)
				}
			}
		})
		if err != nil {
			t.Fatalf("%s: %v", style, err)
		}
		if st.Pairs != 60 || st.Misses != want {
			t.Errorf("%s: %d pairs, %d renders; want 60 and %d", style, st.Pairs, st.Misses, want)
		}
	}
}
