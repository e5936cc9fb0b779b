package oci

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/chartserver"
)

// gate holds each request naming a tag until want callers wait for the
// resolution under way (or a deadline passes), so that concurrent
// resolutions overlap for certain.
type gate struct {
	c    *Client
	want int
}

func (g *gate) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.Contains(req.URL.Path, "/manifests/") && !strings.Contains(req.URL.Path, "sha256:") {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) && g.waiting() < g.want {
			time.Sleep(time.Millisecond)
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (g *gate) waiting() int {
	g.c.mu.Lock()
	defer g.c.mu.Unlock()
	n := 0
	for _, f := range g.c.flights {
		n += f.waiters
	}
	return n
}

// TestOneResolutionPerInterval: the passes of N clusters rendering one
// artifact at once ask the registry once; within the interval they ask
// nothing; each Refresh (the interval coming due) asks once for all of
// them, and a moved tag is what they read next.
func TestOneResolutionPerInterval(t *testing.T) {
	const clusters = 20
	reg := chartserver.NewOCI(t)
	push := func(v string) string {
		layer := chartserver.TarGz(t, map[string]string{"cm.yaml": cm("v" + v)})
		return reg.PushArtifact(t, "fleet/app", "stable", "application/vnd.cncf.flux.config.v1+json", FluxContentType, layer)
	}
	first := push("1")
	g := &gate{want: clusters - 1}
	c := New(Options{HTTPClient: &http.Client{Transport: g}, PlainHTTP: true})
	g.c = c
	url, sel := "oci://"+reg.Host()+"/fleet/app", Selector{Tag: "stable", Interval: time.Hour}
	passes := func(want string) {
		t.Helper()
		var wg sync.WaitGroup
		got := make([]string, clusters)
		errs := make([]error, clusters)
		for i := range clusters {
			wg.Go(func() { got[i], errs[i] = c.Resolve(context.Background(), url, sel, Credentials{}) })
		}
		wg.Wait()
		for i := range clusters {
			if errs[i] != nil || got[i] != want {
				t.Fatalf("cluster %d resolved %s %v, want %s", i, got[i], errs[i], want)
			}
		}
	}
	resolutions := func(want int64) {
		t.Helper()
		if n := reg.Resolutions.Load(); n != want {
			t.Fatalf("%d resolutions at the registry, want %d", n, want)
		}
	}
	passes(first)
	resolutions(1)
	passes(first) // within the interval
	resolutions(1)

	g.want = 0
	moved, err := c.Refresh(context.Background(), url, "stable", "")
	if err != nil || moved {
		t.Fatalf("refresh of an unmoved tag: moved %v, %v", moved, err)
	}
	passes(first)
	resolutions(2)

	second := push("2")
	moved, err = c.Refresh(context.Background(), url, "stable", "")
	if err != nil || !moved {
		t.Fatalf("refresh of a moved tag: moved %v, %v", moved, err)
	}
	passes(second)
	resolutions(3)

	if moved, err := c.Refresh(context.Background(), "oci://"+reg.Host()+"/fleet/other", "v1", ""); err != nil || !moved {
		t.Errorf("refresh of an artifact never resolved: moved %v, %v (the passes must resolve it)", moved, err)
	}
	resolutions(3)
}
