package reconciler

import (
	"errors"
	"fmt"
	"strings"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// artifactsOf lists the OCI artifacts a rendering read, for its record.
func artifactsOf(res *render.Result) []status.Artifact {
	var out []status.Artifact
	for _, a := range res.Artifacts {
		out = append(out, status.Artifact{Addon: a.Addon, URL: a.URL, Digest: a.Digest})
	}
	return out
}

// refusedTenant is the record of a profile whose tenant's folder does not
// load: nothing is applied or deleted; its objects stay as they are, and
// the record says what the cluster holds of it (its inventory inv, nil
// for none; listed is false when the inventories could not be read).
func refusedTenant(name string, rt *spec.RefusedTenant, inv *apply.Inventory, listed bool) status.Profile {
	d := rt.Errors[0]
	msg := fmt.Sprintf("tenant %s: its folder does not load, so its profiles keep their last good state: %s", rt.Name, fieldMessage(d))
	if n := len(rt.Errors); n > 1 {
		msg += fmt.Sprintf(" (and %d more errors)", n-1)
	}
	s := status.Profile{Name: name, State: status.StateFailed}
	if inv != nil {
		s.Objects = len(inv.Objects)
		if inv.Complete {
			s.Health = healthSummary(inv.Health)
		}
	}
	s.Error = &status.Error{File: d.File, Line: d.Line, Message: msg + "; " + clusterHolds(inv, listed)}
	return s
}

// clusterHolds says what a cluster holds of a pair that is left alone.
func clusterHolds(inv *apply.Inventory, listed bool) string {
	switch {
	case !listed:
		return "the cluster's inventories could not be read: whatever it holds of the profile is left untouched"
	case inv == nil || len(inv.Objects) == 0:
		return "the cluster holds no object of the profile"
	}
	n := fmt.Sprintf("%d objects", len(inv.Objects))
	if len(inv.Objects) == 1 {
		n = "1 object"
	}
	return fmt.Sprintf("the cluster keeps %s of the profile from revision %s, untouched", n, status.ShortRevision(inv.Revision))
}

func waiting(name, msg string) status.Profile {
	return status.Profile{Name: name, State: status.StateWaitingForDependency, Message: msg}
}

func orPending(s string) string {
	if s == "" {
		return "not applied"
	}
	return s
}

// toStatus turns an apply result into the pair's status record.
func toStatus(r apply.Result) status.Profile {
	s := status.Profile{Name: r.Profile, State: string(r.State), Revision: r.Revision, RenderHash: r.RenderHash,
		DriftCorrections: int64(r.DriftCorrections), Message: r.Waiting}
	if r.Health.Healthy+r.Health.Progressing+r.Health.Degraded+r.Health.Suspended > 0 {
		s.Health = healthSummary(r.Health)
	}
	if r.Err != nil {
		s.Error = objectError(r.Err)
	}
	if len(r.Conflicts) > 0 {
		c := r.Conflicts[0]
		s.Message = c.Describe()
	}
	for _, ch := range r.Changes {
		if s.Message == "" && ch.Action == apply.ActionSkipped && strings.HasPrefix(ch.Message, apply.MsgKeptNotEmpty) {
			s.Message = ch.Object.String() + " " + ch.Message
		}
	}
	if r.State == apply.StateDryRun {
		for _, ch := range r.Changes {
			if ch.Action != apply.ActionUnchanged {
				s.Changes = append(s.Changes, status.Change{Action: string(ch.Action), Object: ch.Object.String()})
			}
		}
	}
	return s
}

func healthSummary(h apply.Health) string {
	parts := []string{fmt.Sprintf("%d healthy", h.Healthy)}
	for _, x := range []struct {
		n    int
		word string
	}{{h.Progressing, "progressing"}, {h.Degraded, "degraded"}, {h.Suspended, "suspended"}} {
		if x.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", x.n, x.word))
		}
	}
	return strings.Join(parts, ", ")
}

// objectError places an apply error at its object when it has one.
func objectError(err error) *status.Error {
	var oe *apply.ObjectError
	if errors.As(err, &oe) {
		return &status.Error{Object: oe.Object.String(), Message: err.Error()}
	}
	return &status.Error{Message: err.Error()}
}

// renderError places a render error at its file and line: the innermost
// render.Error that names a file, with the add-on for context.
func renderError(err error) *status.Error {
	found, addon := render.Innermost(err)
	if found == nil {
		return &status.Error{Message: err.Error()}
	}
	msg := found.Err.Error()
	if addon != "" {
		msg = "add-on " + addon + ": " + msg
	}
	return &status.Error{File: found.File, Line: found.Line, Message: msg}
}
