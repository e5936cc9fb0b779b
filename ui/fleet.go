package ui

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// PageSize is how many clusters the fleet page's matrix shows per page.
const PageSize = 100

// maxProblems bounds the fleet page's problem list; the rest are counted
// and a link filters the matrix to them.
const maxProblems = 100

// StateUnreachable marks a cluster regatta could not reach or read, in the
// problem list and the state filter.
const StateUnreachable = "Unreachable"

// stateOrder is the order of states in the summary and the state filter.
var stateOrder = []string{status.StateFailed, status.StateConflict, status.StateProgressing,
	status.StateWaitingForDependency, status.StateWaitingForRollout, status.StatePaused,
	status.StateDryRun, status.StateWithdrawn, status.StateApplied}

// fleetFilter is the fleet page's query: every filter is in the URL.
type fleetFilter struct {
	Q, State, Profile, Tenant string
	Labels                    []string // k=v
	Page                      int
}

func readFilter(q url.Values) fleetFilter {
	f := fleetFilter{Q: strings.TrimSpace(q.Get("q")), State: q.Get("state"), Profile: q.Get("profile"), Tenant: q.Get("tenant")}
	for _, l := range q["label"] {
		if l = strings.TrimSpace(l); l != "" {
			f.Labels = append(f.Labels, l)
		}
	}
	f.Page, _ = strconv.Atoi(q.Get("page"))
	f.Page = max(f.Page, 1)
	return f
}

// query is the filter as URL parameters (page and at apart).
func (f fleetFilter) query() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"q": f.Q, "state": f.State, "profile": f.Profile, "tenant": f.Tenant} {
		if s != "" {
			v.Set(k, s)
		}
	}
	for _, l := range f.Labels {
		v.Add("label", l)
	}
	return v
}

// summary names the filters and the page, for the page's title.
func (f fleetFilter) summary() string {
	var parts []string
	for _, p := range []struct{ name, v string }{{"search", f.Q}, {"state", f.State}, {"profile", f.Profile}, {"tenant", f.Tenant}} {
		if p.v != "" {
			parts = append(parts, p.name+" "+p.v)
		}
	}
	parts = append(parts, f.Labels...)
	if f.Page > 1 {
		parts = append(parts, "page "+strconv.Itoa(f.Page))
	}
	return text(strings.Join(parts, ", "))
}

// Active reports whether any filter narrows the fleet.
func (f fleetFilter) Active() bool { return len(f.query()) > 0 }

// matches reports whether a cluster passes every filter.
func (f fleetFilter) matches(c status.ClusterStatus) bool {
	return f.matchesText(c) && f.matchesLabels(c) && f.matchesState(c) &&
		(f.Profile == "" || slices.ContainsFunc(c.Profiles, func(p status.Profile) bool { return p.Name == f.Profile })) &&
		(f.Tenant == "" || slices.ContainsFunc(c.Profiles, func(p status.Profile) bool { return p.Tenant == f.Tenant }))
}

func (f fleetFilter) matchesText(c status.ClusterStatus) bool {
	if f.Q == "" {
		return true
	}
	q := strings.ToLower(f.Q)
	return strings.Contains(strings.ToLower(c.Cluster), q) ||
		slices.ContainsFunc(c.Profiles, func(p status.Profile) bool { return strings.Contains(strings.ToLower(p.Name), q) })
}

func (f fleetFilter) matchesLabels(c status.ClusterStatus) bool {
	for _, l := range f.Labels {
		k, v, hasValue := strings.Cut(l, "=")
		got, ok := c.Labels[strings.TrimSpace(k)]
		if !ok || hasValue && got != strings.TrimSpace(v) {
			return false
		}
	}
	return true
}

func (f fleetFilter) matchesState(c status.ClusterStatus) bool {
	switch f.State {
	case "":
		return true
	case "problems":
		return hasProblem(c)
	case StateUnreachable:
		return !c.Reachable
	}
	return slices.ContainsFunc(c.Profiles, func(p status.Profile) bool { return p.State == f.State })
}

// hasProblem: the cluster needs a look (unreachable, an error, a failing
// classifier, a Failed or Conflict pair, a health check that found
// Degraded resources or could not run).
func hasProblem(c status.ClusterStatus) bool {
	return !c.Reachable || c.Error != "" || len(c.ClassifierErrors) > 0 ||
		slices.ContainsFunc(c.Profiles, func(p status.Profile) bool { return failing(p.State) }) ||
		slices.ContainsFunc(c.HealthChecks, checkFails)
}

// StateDegraded marks a health check that found Degraded resources, and
// StateCheckError one that could not run, in the problem list.
const (
	StateDegraded   = "Degraded"
	StateCheckError = "CheckError"
)

func checkFails(h status.HealthCheck) bool { return h.Error != "" || h.Degraded > 0 }

// checkProblem is a failing health check's problem line.
func checkProblem(cluster string, h status.HealthCheck) problem {
	p := problem{Cluster: cluster, Check: h.Check, Alert: h.Alert, State: StateDegraded}
	switch {
	case h.Error != "":
		p.State, p.Message = StateCheckError, oneLine(text(h.Error), maxLine)
	case len(h.Resources) > 0:
		r := h.Resources[0]
		p.Message = oneLine(text(fmt.Sprintf("%d Degraded; first %s: %s", h.Degraded, r.Object, r.Message)), maxLine)
	default:
		p.Message = fmt.Sprintf("%d Degraded", h.Degraded)
	}
	return p
}

func failing(state string) bool { return state == status.StateFailed || state == status.StateConflict }

// fleetBody is the fleet page's content.
type fleetBody struct {
	Filter   fleetFilter
	Fleet    status.Fleet
	Clusters int
	Summary  []stateCount
	Problems []problem
	// MoreProblems counts the problems beyond maxProblems.
	MoreProblems int
	// Profiles are the matrix's columns; Rows its clusters of this page.
	Profiles []string
	Rows     []matrixRow
	Matched  int
	Pages    []pageLink
	Options  filterOptions
	Rollouts []rolloutLine
}

// rolloutLine is one rolling profile on the fleet page.
type rolloutLine struct {
	status.RolloutStatus
	Progress string
}

type stateCount struct {
	State string
	Count int
}

type problem struct {
	Cluster, Profile, State, Message string
	// Check and Alert name a failing health check.
	Check, Alert string
	// Since is since when it has been so, once known.
	Since *sinceMark
}

type matrixRow struct {
	Cluster   string
	Reachable bool
	Problem   bool
	Cells     []matrixCell
}

type matrixCell struct {
	Profile, State, Revision string
}

type pageLink struct {
	Label   string
	URL     string
	Current bool
}

// filterOptions are the values the filter form offers.
type filterOptions struct {
	States, Profiles, Tenants []string
}

func (s *Server) serveFleet(w http.ResponseWriter, r *http.Request) {
	v, err := s.viewOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f := readFilter(r.URL.Query())
	d := pageData{Title: "fleet", Nav: "fleet", View: v}
	body := fleetPage(v.Snapshot, f, func(page int) string { return d.Link(pageURL(f, page)) })
	markProblems(body.Problems, s.sinceOf(v), time.Now())
	if sum := f.summary(); sum != "" {
		d.Title = "fleet: " + sum
	}
	d.Body = body
	s.render(w, r, http.StatusOK, "fleet", d)
}

// pageURL is the fleet page's URL for one page of the filtered matrix.
func pageURL(f fleetFilter, page int) string {
	q := f.query()
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}

// fleetPage builds the fleet page: the summary of the whole visible fleet,
// then the problems, the matrix and its pages of the filtered clusters,
// problems first.
func fleetPage(s status.Snapshot, f fleetFilter, link func(page int) string) fleetBody {
	b := fleetBody{Filter: f, Fleet: s.Fleet, Clusters: len(s.Clusters), Summary: summary(s.Clusters), Options: options(s.Clusters)}
	for _, r := range s.Fleet.Rollouts {
		if !r.Complete {
			b.Rollouts = append(b.Rollouts, rolloutLine{RolloutStatus: r, Progress: stageProgress(r)})
		}
	}
	var hit []status.ClusterStatus
	for _, c := range s.Clusters {
		if f.matches(c) {
			hit = append(hit, c)
		}
	}
	sort.SliceStable(hit, func(i, j int) bool { return hasProblem(hit[i]) && !hasProblem(hit[j]) })
	b.Matched = len(hit)
	b.Problems, b.MoreProblems = problems(hit)
	b.Profiles = profileNames(hit)
	pages := max(1, (len(hit)+PageSize-1)/PageSize)
	page := min(f.Page, pages)
	for _, c := range hit[min((page-1)*PageSize, len(hit)):min(page*PageSize, len(hit))] {
		b.Rows = append(b.Rows, matrixRowOf(c, b.Profiles))
	}
	if pages > 1 {
		b.Pages = pageLinks(page, pages, link)
	}
	return b
}

func summary(cs []status.ClusterStatus) []stateCount {
	counts := map[string]int{}
	for _, c := range cs {
		if !c.Reachable {
			counts[StateUnreachable]++
		}
		for _, p := range c.Profiles {
			counts[p.State]++
		}
	}
	var out []stateCount
	for _, st := range append([]string{StateUnreachable}, stateOrder...) {
		if counts[st] > 0 {
			out = append(out, stateCount{st, counts[st]})
		}
		delete(counts, st)
	}
	for _, st := range sortedKeys(counts) { // states this UI does not know yet
		out = append(out, stateCount{st, counts[st]})
	}
	return out
}

// problems lists the unreachable clusters and failing pairs, up to
// maxProblems, and counts the rest.
func problems(cs []status.ClusterStatus) ([]problem, int) {
	var out []problem
	more := 0
	add := func(p problem) {
		if len(out) == maxProblems {
			more++
			return
		}
		out = append(out, p)
	}
	for _, c := range cs {
		if !c.Reachable || c.Error != "" {
			add(problem{Cluster: c.Cluster, State: StateUnreachable, Message: oneLine(text(c.Error), maxLine)})
		}
		for _, h := range c.HealthChecks {
			if checkFails(h) {
				add(checkProblem(c.Cluster, h))
			}
		}
		for _, p := range c.Profiles {
			if failing(p.State) {
				add(problem{Cluster: c.Cluster, Profile: p.Name, State: p.State, Message: pairMessage(p)})
			}
		}
	}
	return out, more
}

// maxLine is the most bytes of a text in a list (the problems, a
// profile's clusters); the cluster page shows it whole.
const maxLine = 300

// pairMessage is the first thing to read of a pair, on one line: its
// error placed at file and line, else its message or health.
func pairMessage(p status.Profile) string {
	switch {
	case p.Error != nil:
		return oneLine(errText(p.Error), maxLine)
	case p.Message != "":
		return oneLine(text(p.Message), maxLine)
	}
	return oneLine(text(p.Health), maxLine)
}

// oneLine is s on one line, cut to about n bytes at a character boundary.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func matrixRowOf(c status.ClusterStatus, profiles []string) matrixRow {
	row := matrixRow{Cluster: c.Cluster, Reachable: c.Reachable, Problem: hasProblem(c), Cells: make([]matrixCell, len(profiles))}
	for _, p := range c.Profiles {
		if i, ok := slices.BinarySearch(profiles, p.Name); ok {
			row.Cells[i] = matrixCell{Profile: p.Name, State: p.State, Revision: p.Revision}
		}
	}
	return row
}

// pageLinks are the matrix's page links: first, last and a window around
// the current page.
func pageLinks(page, pages int, link func(int) string) []pageLink {
	var out []pageLink
	last := 0
	for n := 1; n <= pages; n++ {
		if n != 1 && n != pages && (n < page-3 || n > page+3) {
			continue
		}
		if last != 0 && n != last+1 {
			out = append(out, pageLink{Label: "…"})
		}
		out = append(out, pageLink{Label: strconv.Itoa(n), URL: link(n), Current: n == page})
		last = n
	}
	if page > 1 {
		out = append([]pageLink{{Label: "previous", URL: link(page - 1)}}, out...)
	}
	if page < pages {
		out = append(out, pageLink{Label: "next", URL: link(page + 1)})
	}
	return out
}

func options(cs []status.ClusterStatus) filterOptions {
	states, tenants := map[string]bool{}, map[string]bool{}
	for _, c := range cs {
		for _, p := range c.Profiles {
			states[p.State] = true
			if p.Tenant != "" {
				tenants[p.Tenant] = true
			}
		}
	}
	o := filterOptions{States: []string{"problems", StateUnreachable}, Profiles: profileNames(cs), Tenants: sortedKeys(tenants)}
	for _, st := range stateOrder {
		if states[st] {
			o.States = append(o.States, st)
		}
		delete(states, st)
	}
	o.States = append(o.States, sortedKeys(states)...)
	return o
}

// profileNames are the profiles of the clusters' pairs, sorted.
func profileNames(cs []status.ClusterStatus) []string {
	seen := map[string]bool{}
	for _, c := range cs {
		for _, p := range c.Profiles {
			seen[p.Name] = true
		}
	}
	return sortedKeys(seen)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
