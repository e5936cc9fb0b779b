package ui

import (
	"net/http"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// eventsBody is the events page's content: every event add-on instance,
// with the cluster and profile it is deployed by.
type eventsBody struct {
	Instances []eventRow
	// More counts the instances beyond maxInstances.
	More int
}

// maxInstances bounds the events page (every cluster's record under
// status/clusters/ lists them all).
const maxInstances = 2000

type eventRow struct {
	status.EventInstance
	Cluster, Profile string
}

func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	v, err := s.viewOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var body eventsBody
	for _, c := range v.Snapshot.Clusters {
		for _, p := range c.Profiles {
			for _, in := range p.EventInstances {
				if len(body.Instances) == maxInstances {
					body.More++
					continue
				}
				body.Instances = append(body.Instances, eventRow{EventInstance: in, Cluster: c.Cluster, Profile: p.Name})
			}
		}
	}
	s.render(w, r, http.StatusOK, "events", pageData{Title: "events", Nav: "events", View: v, Body: body})
}
