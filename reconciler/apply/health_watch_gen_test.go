package apply

import (
	"errors"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// available is a Deployment of generation gen whose status says its
// controller observed gen and every replica is available.
func available(gen int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "generation": gen},
		"spec":     map[string]any{"replicas": int64(1)},
		"status": map[string]any{"observedGeneration": gen, "replicas": int64(1), "updatedReplicas": int64(1),
			"readyReplicas": int64(1), "availableReplicas": int64(1),
			"conditions": []any{map[string]any{"type": "Available", "status": "True"}}},
	}}
}

// TestHealthWatchIgnoresStaleGenerations: an object seen at a generation
// older than the one the apply returned is not judged, however healthy its
// status (it describes the previous spec); at the applied generation it is.
// A narrow test: the statuses are written by hand, no server involved.
func TestHealthWatchIgnoresStaleGenerations(t *testing.T) {
	h := newHealthReader(nil, nil, nil)
	id := object.UnstructuredToObjMetadata(available(1))
	w := &healthWatch{h: h, gens: map[object.ObjMetadata]int64{id: 2}, changed: make(chan struct{}, 1)}
	g := &watchGroup{gvk: available(1).GroupVersionKind(), ids: map[string]object.ObjMetadata{"web": id}}
	w.record(t.Context(), g, available(1))
	if done, _ := h.settled(object.ObjMetadataSet{id}); done || h.last[id] != nil {
		t.Fatalf("a stale generation was judged: %+v", h.last[id])
	}
	w.record(t.Context(), g, available(2))
	if rs := h.last[id]; rs == nil || rs.Status != status.CurrentStatus {
		t.Fatalf("the applied generation, available: %+v; want Current", rs)
	}
}

// TestCannotWatch: what makes a kind fall back to polling (RBAC, an API
// that serves no list or watch, a kind no longer served) and what only
// makes the watch list again or retry.
func TestCannotWatch(t *testing.T) {
	deploy := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewForbidden(deploy, "", errors.New("RBAC")), true},
		{apierrors.NewMethodNotSupported(schema.GroupResource{Group: "metrics.k8s.io", Resource: "pods"}, "watch"), true},
		{apierrors.NewNotFound(deploy, ""), true},
		{apierrors.NewGone("too old"), false},
		{apierrors.NewResourceExpired("too old"), false},
		{apierrors.NewInternalError(errors.New("etcd")), false},
		{errors.New("connection reset"), false},
	} {
		if got := cannotWatch(tc.err); got != tc.want {
			t.Errorf("cannotWatch(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
