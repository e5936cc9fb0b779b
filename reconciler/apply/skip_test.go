package apply_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

// An unchanged render hash on a healthy pair makes no write request (one
// read of the inventory, none when the caller listed it), whatever the
// revision; a changed hash applies.
func TestUnchangedRenderHashMakesNoWrites(t *testing.T) {
	for _, mode := range []string{spec.SyncModeContinuous, spec.SyncModeContinuousWithDriftDetection} {
		t.Run(mode, func(t *testing.T) {
			opts, counter := countedOptions()
			c := target(t, newManager(t, opts), mainCluster)
			profile := "skip-" + fmt.Sprint(len(mode))
			ns := profile
			req := apply.Request{Profile: profile, SyncMode: mode, Revision: "r1", RenderHash: "h1",
				Steps: []apply.Step{step("a", namespace(ns), configMap(ns, profile, map[string]string{"k": "v"}))}}
			mustApplied(t, c.Apply(t.Context(), req))
			if w := c.Drift(); w != nil { // its watches list in the background
				testenv.WaitFor(t, 10*time.Second, "drift watches listed", w.HasSynced)
			}
			counter.reset()
			req.Revision = "r2"
			res := c.Apply(t.Context(), req)
			got := counter.reset()
			if !res.Skipped || res.State != apply.StateApplied || counter.writes() != 0 || got["GET"] != 1 || len(got) != 1 {
				t.Fatalf("unchanged hash: skipped %v, state %s, requests %v", res.Skipped, res.State, got)
			}
			// With the inventory listed earlier in the pass, no request at all.
			invs, err := c.Inventories(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, inv := range invs {
				if inv.Profile == profile {
					req.Listed, req.Inventory = true, inv
				}
			}
			counter.reset()
			res = c.Apply(t.Context(), req)
			if got := counter.reset(); !req.Listed || !res.Skipped || len(got) != 0 {
				t.Fatalf("unchanged hash, inventory listed: listed %v, skipped %v, requests %v", req.Listed, res.Skipped, got)
			}
			req.Listed, req.Inventory = false, nil
			req.RenderHash = "h2"
			if res = c.Apply(t.Context(), req); res.Skipped {
				t.Fatalf("changed hash skipped: %s", res)
			}
		})
	}
}

// TestApplyManyObjects measures a first apply of 300 objects to one cluster,
// an unchanged re-apply by a new Manager (GET and dry-run per object), and a
// skipped pass.
func TestApplyManyObjects(t *testing.T) {
	const nsCount, perNS = 3, 100
	var steps []apply.Step
	for i := range nsCount {
		ns := fmt.Sprintf("bulk-%d", i)
		objs := []*unstructured.Unstructured{namespace(ns)}
		for j := range perNS - 1 {
			objs = append(objs, configMap(ns, fmt.Sprintf("cm-%03d", j), map[string]string{"i": fmt.Sprint(j), "payload": "some configuration value"}))
		}
		steps = append(steps, step(fmt.Sprintf("addon-%d", i), objs...))
	}
	req := apply.Request{Profile: "bulk", RenderHash: "h1", Steps: steps}
	opts := testOptions()
	if v := os.Getenv("APPLY_QPS"); v != "" {
		q, _ := strconv.Atoi(v)
		opts.Client.QPS, opts.Client.Burst = float32(q), 2*q
	}
	c := target(t, newManager(t, opts), mainCluster)
	start := time.Now()
	res := c.Apply(t.Context(), req)
	first := time.Since(start)
	mustApplied(t, res)
	if res.Counts.Created != nsCount*perNS {
		t.Fatalf("created %d", res.Counts.Created)
	}
	start = time.Now()
	res = target(t, newManager(t, testOptions()), mainCluster).Apply(t.Context(), req)
	again := time.Since(start)
	mustApplied(t, res)
	unchanged := res.Counts.Unchanged
	start = time.Now()
	if res = c.Apply(t.Context(), req); !res.Skipped {
		t.Fatal("not skipped")
	}
	t.Logf("%d objects: first apply %s, unchanged re-apply after restart %s (%d unchanged), skipped pass %s",
		nsCount*perNS, first.Round(time.Millisecond), again.Round(time.Millisecond), unchanged,
		time.Since(start).Round(time.Microsecond))
}
