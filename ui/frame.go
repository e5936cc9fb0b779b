package ui

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/ui/access"
)

// view is the frame a request shows, as its viewer may see it.
type view struct {
	Frame
	// Live: a daemon's newest status, not yet on the status branch.
	Live bool
	// At is the request's ?at= (time travel); empty for the head.
	At     string
	viewer access.Viewer
}

// TimeTravel reports a frame chosen by ?at=.
func (v view) TimeTravel() bool { return v.At != "" }

// errBadAt is a ?at= that is neither a time nor a commit hash.
var errBadAt = errors.New("at: want an RFC 3339 time (2026-01-02T15:04:05Z) or a status commit hash")

// viewOf reads the frame the request asks for (?at=, else the head) and
// keeps of it what the request's viewer may see.
func (s *Server) viewOf(r *http.Request) (view, error) {
	at := strings.TrimSpace(r.URL.Query().Get("at"))
	f, live, err := s.frameAt(r.Context(), at)
	if err != nil {
		return view{}, err
	}
	vw := access.ViewerFrom(r.Context())
	f.Snapshot = visible(f.Snapshot, vw)
	return view{Frame: f, Live: live, At: at, viewer: vw}, nil
}

// frameAt is the frame at a time or commit, or the head when at is empty.
func (s *Server) frameAt(ctx context.Context, at string) (Frame, bool, error) {
	h := s.opts.History
	if at == "" {
		return s.head(ctx)
	}
	if t, ok := parseTime(at); ok {
		f, err := h.At(ctx, t)
		return f, false, err
	}
	if !isHex(at) {
		return Frame{}, false, errBadAt
	}
	f, err := h.Frame(ctx, at)
	return f, false, err
}

// head is the branch's newest frame, or the daemon's newest status when
// that is newer and differs from it.
func (s *Server) head(ctx context.Context) (Frame, bool, error) {
	f, err := s.opts.History.Head(ctx)
	s.mu.Lock()
	lf := s.live
	s.mu.Unlock()
	if lf == nil {
		return f, false, err
	}
	if err == nil && (!lf.at.After(f.Time) || lf.fp == s.branchFingerprint(f)) {
		return f, false, nil
	}
	return Frame{Time: lf.at, Snapshot: lf.snap}, true, nil
}

// branchFingerprint is the fingerprint of a branch frame, computed once
// per head commit.
func (s *Server) branchFingerprint(f Frame) uint64 {
	s.mu.Lock()
	fp, ok := s.branchFP[f.Commit]
	s.mu.Unlock()
	if ok {
		return fp
	}
	fp = fingerprint(f.Snapshot)
	s.mu.Lock()
	clear(s.branchFP) // only the newest head matters
	s.branchFP[f.Commit] = fp
	s.mu.Unlock()
	return fp
}

// fingerprint hashes what the pages show of a snapshot, leaving out what
// the status branch adds when it commits (record generations, times), so
// that a daemon's status and the commit of it compare equal.
func fingerprint(s status.Snapshot) uint64 {
	h := fnv.New64a()
	fl := s.Fleet
	fmt.Fprintf(h, "%s|%s|%d|%d|%d\n", fl.SourceRevision, fl.AppliedRevision, len(fl.Errors), len(fl.RefusedTenants), len(fl.DependsOn))
	for _, r := range fl.Rollouts {
		fmt.Fprintf(h, "r %s|%s|%s|%v|%v|%s|%v\n", r.Profile, r.Revision, r.Stage, r.Halted, r.Complete, head(r.Reason), r.Stages)
	}
	for _, c := range s.Clusters {
		fmt.Fprintf(h, "c %s|%s|%s|%s|%v|%v|%s|%d|%d\n", c.Cluster, c.SourceRevision, c.Owner, c.Mode, c.Paused, c.Reachable, head(c.Error), len(c.Labels), len(c.ClassifierErrors))
		for _, p := range c.Profiles {
			hashPair(h, p)
		}
		for _, k := range c.HealthChecks {
			fmt.Fprintf(h, "h %s|%s|%d|%d|%s\n", k.Alert, k.Check, k.Objects, k.Degraded, head(k.Error))
		}
	}
	return h.Sum64()
}

// hashPair hashes a pair; of its texts, their start only (the status
// files cut long texts, with a marker).
func hashPair(w io.Writer, p status.Profile) {
	b := head
	fmt.Fprintf(w, "p %s|%s|%s|%s|%d|%s|%s|%d|%d\n", p.Name, p.State, p.Revision, p.RenderHash, p.Objects, b(p.Health), b(p.Message), p.DriftCorrections, len(p.EventInstances))
	if p.Error != nil {
		fmt.Fprintf(w, "e %s|%s|%d|%s\n", b(p.Error.Object), b(p.Error.File), p.Error.Line, b(p.Error.Message))
	}
	if r := p.Rollout; r != nil {
		fmt.Fprintf(w, "o %s|%s|%s|%s\n", r.Revision, r.Stage, r.State, b(r.Reason))
	}
}

// head is the start of a text, which the status files keep whole.
func head(s string) string { return s[:min(len(s), 1024)] }

// visible is what a viewer may see of a snapshot: all of it for the
// whole-fleet viewer, else status.ForTenant of each of its tenants
// merged (nothing for the zero Viewer).
func visible(s status.Snapshot, v access.Viewer) status.Snapshot {
	if v.Fleet {
		return s
	}
	if len(v.Tenants) == 1 {
		return status.ForTenant(s, v.Tenants[0])
	}
	out := status.Snapshot{Fleet: s.Fleet}
	out.Fleet.Rollouts, out.Fleet.DependsOn, out.Fleet.RefusedTenants = nil, nil, nil
	if len(v.Tenants) == 0 {
		out.Fleet.Errors, out.Fleet.Verification = nil, nil
		return out
	}
	pairs := map[string][]status.Profile{}
	for _, t := range v.Tenants {
		part := status.ForTenant(s, t)
		out.Fleet.Rollouts = append(out.Fleet.Rollouts, part.Fleet.Rollouts...)
		out.Fleet.DependsOn = append(out.Fleet.DependsOn, part.Fleet.DependsOn...)
		out.Fleet.RefusedTenants = append(out.Fleet.RefusedTenants, part.Fleet.RefusedTenants...)
		for _, c := range part.Clusters {
			pairs[c.Cluster] = append(pairs[c.Cluster], c.Profiles...)
		}
	}
	for _, c := range s.Clusters { // the snapshot's order
		if ps, ok := pairs[c.Cluster]; ok {
			c.Profiles = ps
			out.Clusters = append(out.Clusters, c)
		}
	}
	sort.SliceStable(out.Fleet.Rollouts, func(i, j int) bool { return out.Fleet.Rollouts[i].Profile < out.Fleet.Rollouts[j].Profile })
	return out
}

// parseTime reads ?at= as a time: RFC 3339, or a browser's
// datetime-local value (taken as UTC).
func parseTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// isHex reports a plausible (abbreviated) commit hash.
func isHex(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	return !slices.ContainsFunc([]byte(s), func(c byte) bool {
		return !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F')
	})
}

// WholeFleet reports a viewer of the whole fleet.
func (v view) WholeFleet() bool { return v.viewer.Fleet }
