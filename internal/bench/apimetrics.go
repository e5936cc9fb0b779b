package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
)

// RequestKey groups apiserver_request_total series.
type RequestKey struct {
	Verb        string `json:"verb"`
	Group       string `json:"group,omitempty"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	DryRun      string `json:"dryRun,omitempty"`
}

// Write reports whether the request changes state: a mutating verb that
// is not a dry run.
func (k RequestKey) Write() bool {
	switch k.Verb {
	case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY", "CREATE", "UPDATE":
		return k.DryRun == ""
	}
	return false
}

// String is e.g. "APPLY configmaps (dry run)".
func (k RequestKey) String() string {
	s := k.Verb + " " + k.Resource
	if k.Group != "" {
		s += "." + k.Group
	}
	if k.Subresource != "" {
		s += "/" + k.Subresource
	}
	if k.DryRun != "" {
		s += " (dry run)"
	}
	return s
}

// RequestCounts are request counts by key.
type RequestCounts map[RequestKey]float64

// ScrapeRequests reads apiserver_request_total from an API server's
// /metrics, as its admin.
func ScrapeRequests(ctx context.Context, cfg *rest.Config) (RequestCounts, error) {
	body, err := scrapeMetrics(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return parseRequests(bytes.NewReader(body))
}

// scrapeMetrics reads an API server's /metrics, as its admin.
func scrapeMetrics(ctx context.Context, cfg *rest.Config) ([]byte, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// parseRequests reads the apiserver_request_total series of a Prometheus
// text exposition.
func parseRequests(r io.Reader) (RequestCounts, error) {
	out := RequestCounts{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(line, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("apiserver_request_total: %q: %w", value, err)
		}
		out[keyOf(parseLabels(labels))] += v
	}
	return out, sc.Err()
}

func keyOf(l map[string]string) RequestKey {
	return RequestKey{Verb: l["verb"], Group: l["group"], Resource: l["resource"],
		Subresource: l["subresource"], DryRun: l["dry_run"]}
}

// parseLabels parses `a="x",b="y"` (values hold no escaped quotes here).
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		name, rest, ok := strings.Cut(s, `="`)
		if !ok {
			break
		}
		value, rest, _ := strings.Cut(rest, `"`)
		out[name] = value
		s = strings.TrimPrefix(rest, ",")
	}
	return out
}

// Sub returns c minus base, keeping positive differences.
func (c RequestCounts) Sub(base RequestCounts) RequestCounts { return diffAbove(c, base, 0) }

// diffAbove returns the differences of after and before larger than min,
// by key.
func diffAbove[M ~map[K]float64, K comparable](after, before M, min float64) M {
	out := M{}
	for k, v := range after {
		if d := v - before[k]; d > min {
			out[k] = d
		}
	}
	return out
}

// Own returns the counts of the kinds of request that background does not
// make at all: what is left of c once an idle API server's own requests
// (and their jitter) are set aside.
func (c RequestCounts) Own(background RequestCounts) RequestCounts {
	out := RequestCounts{}
	for k, v := range c {
		if background[k] == 0 {
			out[k] = v
		}
	}
	return out
}

// Add adds other to c.
func (c RequestCounts) Add(other RequestCounts) {
	for k, v := range other {
		c[k] += v
	}
}

// Scale returns c with every count multiplied by f.
func (c RequestCounts) Scale(f float64) RequestCounts {
	out := RequestCounts{}
	for k, v := range c {
		out[k] = v * f
	}
	return out
}

// Totals returns the write and read totals (dry runs count as reads: they
// change nothing).
func (c RequestCounts) Totals() (writes, reads float64) {
	for k, v := range c {
		if k.Write() {
			writes += v
		} else {
			reads += v
		}
	}
	return writes, reads
}

// Rows returns the counts as sorted rows.
func (c RequestCounts) Rows() []RequestRow {
	var out []RequestRow
	for k, v := range c {
		out = append(out, RequestRow{RequestKey: k, Count: v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].String() < out[j].String()
	})
	return out
}

// RequestRow is one key and its count.
type RequestRow struct {
	RequestKey
	Count float64 `json:"count"`
}
