package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/ui/access"
)

// MaxCompareRows bounds the cluster and pair changes the compare page
// lists (problems first); the rest are counted. At 2,000 clusters the
// page stays well under 2 MiB.
const MaxCompareRows = 500

// maxFleetChanges bounds the fleet-level changes listed.
const maxFleetChanges = 100

// The kinds of a change (a row's data-change), in the order listed.
const (
	changeFailed  = "failed"  // a pair became Failed or Conflict, a cluster unreachable
	changeFixed   = "fixed"   // it is no longer
	changeAdded   = "added"   // a cluster, pair, rollout or error appeared
	changeRemoved = "removed" // it went away
	changeChanged = "changed" // anything else listed changed
)

var changeRank = map[string]int{changeFailed: 0, changeFixed: 1, changeAdded: 2, changeRemoved: 3, changeChanged: 4}

// compareBody is the compare page's content.
type compareBody struct {
	// FromAsked and ToAsked are the request's from and to, for the form.
	FromAsked, ToAsked string
	From, To           comparedFrame
	Fleet              []fleetChange
	FleetMore          int
	Rows               []changeRow
	// More counts the rows left out (MaxCompareRows); Counts counts every
	// row by kind.
	More   int
	Counts []changeCount
}

// comparedFrame is one side of a comparison.
type comparedFrame struct {
	Commit, At      string
	Frame           Frame
	SourceRevision  string
	AppliedRevision string
	Live            bool
}

type changeCount struct {
	Change string
	N      int
}

// fieldChange is one field's before → after ("" for absent), as the
// status holds them: the template makes them safe to show (text).
type fieldChange struct{ Field, Before, After string }

// changeRow is a cluster's (Profile empty) or a pair's change.
type changeRow struct {
	Cluster, Profile, Change string
	Fields                   []fieldChange
}

// fleetChange is a change of the fleet's own status: an error, a refused
// tenant or a rollout.
type fleetChange struct {
	What, Name, Change string
	Fields             []fieldChange
}

// ClusterURL links to a cluster's page as the later frame shows it (or
// the earlier one for a removed cluster).
func (b compareBody) ClusterURL(r changeRow) string {
	f := b.To
	if r.Change == changeRemoved && r.Profile == "" {
		f = b.From
	}
	u := "/clusters/" + url.PathEscape(r.Cluster)
	if f.Commit != "" {
		u += "?at=" + f.Commit
	}
	return u
}

// Total is the number of cluster and pair changes.
func (b compareBody) Total() int { return len(b.Rows) + b.More }

// errNoFrom is a compare without ?from=.
var errNoFrom = errors.New("from: required: a status commit hash or an RFC 3339 time (2026-01-02T15:04:05Z)")

func (s *Server) serveCompare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fromAt, toAt := strings.TrimSpace(q.Get("from")), strings.TrimSpace(q.Get("to"))
	if fromAt == "" {
		s.errorPage(w, r, http.StatusBadRequest, errNoFrom.Error())
		return
	}
	vw := access.ViewerFrom(r.Context())
	from, ok := s.comparedAt(w, r, "from", fromAt, vw)
	if !ok {
		return
	}
	to, ok := s.comparedAt(w, r, "to", toAt, vw)
	if !ok {
		return
	}
	body := compareFrames(from, to)
	body.FromAsked, body.ToAsked = fromAt, toAt
	// an explicit to is time travel: the page stays as it is, its links
	// keep ?at=to, and "back to now" compares from with the head
	v := view{Frame: to.Frame, Live: to.Live, At: toAt, viewer: vw}
	here := "/compare?from=" + url.QueryEscape(fromAt)
	s.render(w, r, http.StatusOK, "compare", pageData{Title: compareTitle(from, to), Nav: "revisions", View: v, Body: body, Here: here})
}

// comparedAt reads one side of a comparison the way ?at= is read
// (frameAt) and keeps what the viewer may see; on an error it answers as
// ?at= does (400 for a bad value, 404 for one the history lacks), naming
// the parameter.
func (s *Server) comparedAt(w http.ResponseWriter, r *http.Request, param, at string, vw access.Viewer) (comparedFrame, bool) {
	f, live, err := s.frameAt(r.Context(), at)
	switch {
	case err == nil:
	case errors.Is(err, errBadAt):
		s.errorPage(w, r, http.StatusBadRequest, param+strings.TrimPrefix(errBadAt.Error(), "at"))
		return comparedFrame{}, false
	case errors.Is(err, ErrUnknownCommit):
		s.errorPage(w, r, http.StatusNotFound, param+": the status branch's history has no commit "+at)
		return comparedFrame{}, false
	case errors.Is(err, ErrBeforeHistory):
		s.errorPage(w, r, http.StatusNotFound, param+": "+at+" is before the oldest status commit kept")
		return comparedFrame{}, false
	default:
		s.fail(w, r, err)
		return comparedFrame{}, false
	}
	f.Snapshot = visible(f.Snapshot, vw)
	fl := f.Snapshot.Fleet
	return comparedFrame{Commit: f.Commit, At: at, Frame: f, SourceRevision: fl.SourceRevision, AppliedRevision: fl.AppliedRevision, Live: live}, true
}

func compareTitle(from, to comparedFrame) string {
	name := func(f comparedFrame) string {
		if f.Commit == "" {
			return "live"
		}
		return status.ShortRevision(f.Commit)
	}
	return "compare " + name(from) + " → " + name(to)
}

// compareFrames lists what changed from one frame to the other.
func compareFrames(from, to comparedFrame) compareBody {
	b := compareBody{From: from, To: to}
	fleet := fleetChanges(from.Frame.Snapshot.Fleet, to.Frame.Snapshot.Fleet)
	if len(fleet) > maxFleetChanges {
		b.FleetMore = len(fleet) - maxFleetChanges
		fleet = fleet[:maxFleetChanges]
	}
	b.Fleet = fleet
	rows := clusterChanges(from.Frame.Snapshot.Clusters, to.Frame.Snapshot.Clusters)
	b.Counts = countChanges(rows)
	if len(rows) > MaxCompareRows {
		b.More = len(rows) - MaxCompareRows
		rows = rows[:MaxCompareRows]
	}
	b.Rows = rows
	return b
}

// countChanges counts rows by kind, in the order listed.
func countChanges(rows []changeRow) []changeCount {
	n := map[string]int{}
	for _, r := range rows {
		n[r.Change]++
	}
	var out []changeCount
	for _, k := range []string{changeFailed, changeFixed, changeAdded, changeRemoved, changeChanged} {
		if n[k] > 0 {
			out = append(out, changeCount{Change: k, N: n[k]})
		}
	}
	return out
}

// stableByRank orders rows problems first, then fixes, then the rest,
// keeping the frames' order within a kind.
func stableByRank(rows []changeRow) []changeRow {
	byRank := make([][]changeRow, len(changeRank))
	for _, r := range rows {
		byRank[changeRank[r.Change]] = append(byRank[changeRank[r.Change]], r)
	}
	out := make([]changeRow, 0, len(rows))
	for _, rs := range byRank {
		out = append(out, rs...)
	}
	return out
}

// kindOf names a change by whether it was, and is, a problem.
func kindOf(wasProblem, isProblem bool) string {
	switch {
	case isProblem && !wasProblem:
		return changeFailed
	case wasProblem && !isProblem:
		return changeFixed
	}
	return changeChanged
}

func boolText(b bool) string { return strconv.FormatBool(b) }
