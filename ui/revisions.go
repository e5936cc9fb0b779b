package ui

import (
	"net/http"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// TimelineLength is how many status commits the revisions page lists.
const TimelineLength = 100

// maxArrivals bounds the arrivals listed per status commit.
const maxArrivals = 50

// revisionsBody is the revisions page's content.
type revisionsBody struct {
	Entries []timelineEntry
}

type timelineEntry struct {
	Entry
	// Shown are the arrivals of clusters the viewer sees, up to
	// maxArrivals; More counts the rest.
	Shown []Arrival
	More  int
	// Previous is the status commit before this one ("" for the oldest
	// listed), for the "compare with previous" link.
	Previous string
}

func (s *Server) serveRevisions(w http.ResponseWriter, r *http.Request) {
	v, err := s.viewOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	entries, err := s.opts.History.Timeline(r.Context(), TimelineLength)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	seen := clusterSet(v.Snapshot)
	body := revisionsBody{}
	for i, e := range entries {
		te := timelineEntry{Entry: e}
		if i+1 < len(entries) {
			te.Previous = entries[i+1].Commit
		}
		for _, a := range e.Arrivals {
			switch {
			case !v.viewer.Fleet && !seen[a.Cluster]:
			case len(te.Shown) == maxArrivals:
				te.More++
			default:
				te.Shown = append(te.Shown, a)
			}
		}
		body.Entries = append(body.Entries, te)
	}
	s.render(w, r, http.StatusOK, "revisions", pageData{Title: "revisions", Nav: "revisions", View: v, Body: body})
}

// clusterSet names the snapshot's clusters.
func clusterSet(s status.Snapshot) map[string]bool {
	out := make(map[string]bool, len(s.Clusters))
	for _, c := range s.Clusters {
		out[c.Cluster] = true
	}
	return out
}
