package ui

import (
	"net/http"
	"sort"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// clusterBody is the cluster page's content.
type clusterBody struct {
	C         status.ClusterStatus
	Labels    []labelRow
	Authority string
	// Since is since when each problem has been so, by profile ("" for
	// the cluster unreachable), once known.
	Since map[string]*sinceMark
}

// labelRow is one effective label and where it comes from: cluster.yaml
// or the classifier that gave it.
type labelRow struct {
	Key, Value, Source string
}

func (s *Server) serveCluster(w http.ResponseWriter, r *http.Request) {
	v, err := s.viewOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	name := r.PathValue("name")
	c, ok := findCluster(v.Snapshot, name)
	if !ok {
		s.forbidden(w, r, v, "cluster")
		return
	}
	body := clusterBody{C: c, Labels: labelRows(c), Since: clusterMarks(name, s.sinceOf(v), time.Now())}
	if !v.TimeTravel() {
		body.Authority = s.authorityOf(name)
	}
	s.render(w, r, http.StatusOK, "cluster", pageData{Title: "cluster " + text(name), View: v, Body: body})
}

func findCluster(s status.Snapshot, name string) (status.ClusterStatus, bool) {
	for _, c := range s.Clusters {
		if c.Cluster == name {
			return c, true
		}
	}
	return status.ClusterStatus{}, false
}

// labelRows are the cluster's effective labels, sorted, each with its
// source: the classifier whose value is in force, else cluster.yaml.
func labelRows(c status.ClusterStatus) []labelRow {
	classifiers := sortedKeys(c.ClassifierLabels)
	var out []labelRow
	for _, k := range sortedKeys(c.Labels) {
		row := labelRow{Key: k, Value: c.Labels[k], Source: "cluster.yaml"}
		for _, name := range classifiers {
			if v, ok := c.ClassifierLabels[name][k]; ok && v == row.Value {
				row.Source = "classifier:" + name
				break
			}
		}
		out = append(out, row)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
