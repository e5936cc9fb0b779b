package apply_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/spec"
)

func imageOf(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		t.Fatalf("%s has no containers", u.GetName())
	}
	img, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
	return img
}

const editedImage = `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/edited:9"}]}}}}`

// TestAsyncWaitingStepIsRecheckedNotReapplied: a pass of the same render
// while an add-on waits for health reads its health and sends no write, not
// even a dry-run; an edit made meanwhile to a drift-detected profile is
// restored by the drift watcher; once healthy, the pass goes on without
// applying the add-on again.
func TestAsyncWaitingStepIsRecheckedNotReapplied(t *testing.T) {
	opts, counter := countedOptions()
	m := newManager(t, opts)
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	const ns = "async-recheck"
	req := asyncRequest(t, ns, ns, 5*time.Minute)
	req.SyncMode = spec.SyncModeContinuousWithDriftDetection
	if res := c.Apply(t.Context(), req); res.State != apply.StateProgressing {
		t.Fatalf("first apply: %s %q %v", res.State, res.Waiting, res.Err)
	}

	counter.reset()
	res := c.Apply(t.Context(), req)
	if res.State != apply.StateProgressing || res.Waiting == "" {
		t.Fatalf("second apply: %s %q %v", res.State, res.Waiting, res.Err)
	}
	// Only the inventory is written (the intent lists the next add-on).
	if w := counter.wroteTo("/namespaces/" + ns); len(w) != 0 {
		t.Errorf("the waiting add-on was applied again: %v", w)
	}
	if res.Counts.Unchanged == 0 {
		t.Errorf("counts %+v: the re-checked add-on is not counted unchanged", res.Counts)
	}

	mergePatch(t, k, get(t, k, deployGVK, ns, "web"), editedImage)
	testenv.WaitFor(t, 10*time.Second, "the drift watcher to restore the image during the wait", func() bool {
		return imageOf(t, get(t, k, deployGVK, ns, "web")) == "registry.example/app:1.0"
	})

	if err := markReady(t.Context(), k, ns, "web"); err != nil {
		t.Fatal(err)
	}
	counter.reset()
	mustApplied(t, c.Apply(t.Context(), req))
	if getCM(t, k, ns, "after-web") == nil {
		t.Fatal("the add-on after the healthy one was not applied")
	}
	if w := counter.wroteTo("/deployments/"); len(w) != 0 {
		t.Errorf("resuming applied the healthy add-on again: %v", w)
	}
}

// TestAsyncRecheckEndsAtTheDeadline: a Continuous add-on is not re-applied
// while it waits, so an edit made meanwhile stays; once its health deadline
// passed, the next pass applies it again and restores the edit (which
// starts a new deadline, as any apply that changes the add-on does); one
// that changes nothing reports the pair Failed.
func TestAsyncRecheckEndsAtTheDeadline(t *testing.T) {
	opts, counter := countedOptions()
	m := newManager(t, opts)
	c, k := target(t, m, mainCluster), kube(t, mainCluster)
	const ns = "async-recheck-deadline"
	req := asyncRequest(t, ns, ns, time.Second)
	if res := c.Apply(t.Context(), req); res.State != apply.StateProgressing {
		t.Fatalf("first apply: %s %q %v", res.State, res.Waiting, res.Err)
	}
	mergePatch(t, k, get(t, k, deployGVK, ns, "web"), editedImage)
	counter.reset()
	if res := c.Apply(t.Context(), req); res.State != apply.StateProgressing {
		t.Fatalf("second apply: %s %q %v", res.State, res.Waiting, res.Err)
	}
	if w := counter.wroteTo("/deployments/"); len(w) != 0 {
		t.Errorf("the waiting add-on was applied again: %v", w)
	}
	if img := imageOf(t, get(t, k, deployGVK, ns, "web")); img != "registry.example/edited:9" {
		t.Fatalf("image %q: the waiting Continuous add-on was re-applied", img)
	}
	var reported atomic.Int32
	testenv.WaitFor(t, 10*time.Second, "the deadline to be reported", func() bool {
		m.PollHealth(t.Context(), func(string) { reported.Add(1) })
		return reported.Load() > 0
	})
	counter.reset()
	if res := c.Apply(t.Context(), req); res.State != apply.StateProgressing {
		t.Fatalf("after the deadline, restoring the edit: %s %v", res.State, res.Err)
	}
	if w := counter.wroteTo("/deployments/"); len(w) == 0 {
		t.Error("the pass after the deadline did not apply the add-on")
	}
	if img := imageOf(t, get(t, k, deployGVK, ns, "web")); img != "registry.example/app:1.0" {
		t.Fatalf("image %q after the deadline, want the rendered one", img)
	}
	reported.Store(0)
	testenv.WaitFor(t, 10*time.Second, "the new deadline to be reported", func() bool {
		m.PollHealth(t.Context(), func(string) { reported.Add(1) })
		return reported.Load() > 0
	})
	res := c.Apply(t.Context(), req)
	var he *apply.HealthError
	if res.State != apply.StateFailed || !errors.As(res.Err, &he) {
		t.Fatalf("after the new deadline: %s %v", res.State, res.Err)
	}
}
