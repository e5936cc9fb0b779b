package apply

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/statusreaders"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Health statuses a HealthChecker returns (Argo CD's hs.status values).
const (
	HealthHealthy     = "Healthy"
	HealthProgressing = "Progressing"
	HealthDegraded    = "Degraded"
	HealthSuspended   = "Suspended"
)

// HealthChecker overrides kstatus for the kinds it knows (a profile's Lua
// health scripts). Check returns ok false when it has no override for the
// object's kind; then kstatus decides. When ok, status is one of Healthy,
// Progressing, Degraded and Suspended: Healthy and Suspended end the wait,
// Progressing keeps waiting, Degraded fails the add-on. Check is called
// from several goroutines and on every poll; ctx carries the deadline.
type HealthChecker interface {
	Check(ctx context.Context, obj *unstructured.Unstructured) (status, message string, ok bool, err error)
}

// healthReader computes status with the default kstatus readers, lets the
// HealthChecker override it, and records the last status of every object
// for the Result's health summary. Health watches (health_watch.go) judge
// each event with ReadStatusForObject; polls read with ReadStatus.
type healthReader struct {
	def engine.StatusReader
	// generic reads an object alone (see reader).
	generic engine.StatusReader
	checker HealthChecker
	log     *slog.Logger

	mu   sync.Mutex
	last map[object.ObjMetadata]*event.ResourceStatus
	// suspended marks objects whose override said Suspended.
	suspended map[object.ObjMetadata]bool
	// scriptFailed marks objects whose health script failed (logged once).
	scriptFailed map[object.ObjMetadata]bool
}

func newHealthReader(mapper meta.RESTMapper, checker HealthChecker, log *slog.Logger) *healthReader {
	return &healthReader{def: statusreaders.NewDefaultStatusReader(mapper),
		generic: statusreaders.NewGenericStatusReader(mapper, status.Compute), checker: checker, log: log,
		last: map[object.ObjMetadata]*event.ResourceStatus{}, suspended: map[object.ObjMetadata]bool{},
		scriptFailed: map[object.ObjMetadata]bool{}}
}

func (h *healthReader) ReadStatus(ctx context.Context, r engine.ClusterReader, id object.ObjMetadata) (*event.ResourceStatus, error) {
	rs, err := h.reader(id.GroupKind).ReadStatus(ctx, r, id)
	return h.override(ctx, rs, err)
}

func (h *healthReader) ReadStatusForObject(ctx context.Context, r engine.ClusterReader, obj *unstructured.Unstructured) (*event.ResourceStatus, error) {
	rs, err := h.reader(obj.GroupVersionKind().GroupKind()).ReadStatusForObject(ctx, r, obj)
	return h.override(ctx, rs, err)
}

// reader returns the reader of a kind. The object is read alone when that
// gives the verdict: for a Deployment, whose status kstatus computes from
// the Deployment only (its own reader also lists the ReplicaSets and their
// Pods, for details regatta does not use), and for a kind the checker
// judges (KindOverrides), whose verdict replaces kstatus's (a StatefulSet's
// Pods need no listing then). Other kinds keep kstatus's readers: failed
// Pods make a ReplicaSet or StatefulSet Failed.
func (h *healthReader) reader(gk schema.GroupKind) engine.StatusReader {
	if gk == deploymentKind {
		return h.generic
	}
	if ko, ok := h.checker.(KindOverrides); ok && ko.Overrides(gk.Group, gk.Kind) {
		return h.generic
	}
	return h.def
}

var deploymentKind = schema.GroupKind{Group: "apps", Kind: "Deployment"}

func (h *healthReader) override(ctx context.Context, rs *event.ResourceStatus, err error) (*event.ResourceStatus, error) {
	if err != nil || rs == nil {
		return rs, err
	}
	suspended := false
	if h.checker != nil && rs.Resource != nil {
		suspended = h.applyChecker(ctx, rs)
	}
	h.mu.Lock()
	h.last[rs.Identifier] = rs
	h.suspended[rs.Identifier] = suspended
	h.mu.Unlock()
	return rs, nil
}

// applyChecker replaces rs's status by the checker's verdict, if it has one.
func (h *healthReader) applyChecker(ctx context.Context, rs *event.ResourceStatus) (suspended bool) {
	st, msg, ok, err := h.checker.Check(ctx, rs.Resource)
	switch {
	case err != nil && ctx.Err() != nil: // the wait ended, not the script
		rs.Status, rs.Message, rs.Error = status.UnknownStatus, "", fmt.Errorf("health check: %w", err)
	case err != nil:
		// A script error (or a sandbox stop) does not go away by waiting:
		// fail the add-on now, naming script, line and error.
		rs.Status, rs.Message, rs.Error = status.FailedStatus, "health script failed: "+err.Error(), nil
		h.logScriptError(rs.Identifier, err)
	case !ok:
	case st == HealthHealthy || st == HealthSuspended:
		rs.Status, rs.Message, rs.Error = status.CurrentStatus, msg, nil
		return st == HealthSuspended
	case st == HealthDegraded:
		rs.Status, rs.Message, rs.Error = status.FailedStatus, msg, nil
	default:
		rs.Status, rs.Message, rs.Error = status.InProgressStatus, msg, nil
	}
	return false
}

// logScriptError logs a health script failure once per object and pass.
func (h *healthReader) logScriptError(id object.ObjMetadata, err error) {
	h.mu.Lock()
	first := !h.scriptFailed[id]
	h.scriptFailed[id] = true
	h.mu.Unlock()
	if first && h.log != nil {
		ref := ObjectRef{Group: id.GroupKind.Group, Kind: id.GroupKind.Kind, Namespace: id.Namespace, Name: id.Name}
		h.log.Warn("health script failed", "object", ref.String(), "error", err)
	}
}

// summary tallies the last statuses of the given objects.
func (h *healthReader) summary(ids object.ObjMetadataSet) (Health, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var hs Health
	degraded := false
	for _, id := range ids {
		rs := h.last[id]
		switch {
		case rs != nil && rs.Status == status.CurrentStatus && h.suspended[id]:
			hs.Suspended++
		case rs != nil && rs.Status == status.CurrentStatus:
			hs.Healthy++
		case rs != nil && rs.Status == status.FailedStatus:
			hs.Degraded++
			degraded = true
			hs.addUnhealthy(id, rs)
		default:
			hs.Progressing++
			hs.addUnhealthy(id, rs)
		}
	}
	return hs, degraded
}

// pending returns the ids that are not healthy as last read (Current).
func (h *healthReader) pending(ids object.ObjMetadataSet) object.ObjMetadataSet {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out object.ObjMetadataSet
	for _, id := range ids {
		if rs := h.last[id]; rs == nil || rs.Status != status.CurrentStatus {
			out = append(out, id)
		}
	}
	return out
}

func (hs *Health) addUnhealthy(id object.ObjMetadata, rs *event.ResourceStatus) {
	if len(hs.Unhealthy) >= 10 {
		return
	}
	ref := ObjectRef{Group: id.GroupKind.Group, Kind: id.GroupKind.Kind, Namespace: id.Namespace, Name: id.Name}
	msg := ref.String() + ": status unknown"
	if rs != nil {
		msg = fmt.Sprintf("%s: %s", ref, rs.Status)
		if rs.Message != "" {
			msg += ": " + rs.Message
		}
	}
	hs.Unhealthy = append(hs.Unhealthy, msg)
}

// counts returns the tallies without the Unhealthy list.
func (hs Health) counts() Health {
	hs.Unhealthy = nil
	return hs
}

func (hs Health) equal(o Health) bool {
	return hs.Healthy == o.Healthy && hs.Progressing == o.Progressing && hs.Degraded == o.Degraded &&
		hs.Suspended == o.Suspended && slices.Equal(hs.Unhealthy, o.Unhealthy)
}

func (hs *Health) merge(o Health) {
	hs.Healthy += o.Healthy
	hs.Progressing += o.Progressing
	hs.Degraded += o.Degraded
	hs.Suspended += o.Suspended
	for _, u := range o.Unhealthy {
		if len(hs.Unhealthy) < 10 {
			hs.Unhealthy = append(hs.Unhealthy, u)
		}
	}
}
