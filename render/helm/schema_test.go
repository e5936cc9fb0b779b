package helm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/render/netpolicy"
)

// countingServer counts the requests it receives.
type countingServer struct {
	*httptest.Server
	requests atomic.Int64
}

// newTrap is a loopback listener no URL policy allows: it must never be
// asked anything.
func newTrap(t *testing.T) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		_, _ = w.Write([]byte(`{"const": "TRAP-CONTENT"}`))
	}))
	t.Cleanup(s.Close)
	return s
}

// schemaRepo is a chart repository serving one chart, "schemas" 1.0.0
// (with its subchart "sub" when sub is not nil), plus extra documents at
// their paths.
type schemaRepo struct {
	countingServer
	docs map[string]string
}

func chartOf(t *testing.T, files map[string]string) *chart.Chart {
	t.Helper()
	var bf []*loader.BufferedFile
	for name, data := range files {
		bf = append(bf, &loader.BufferedFile{Name: name, Data: []byte(data)})
	}
	c, err := loader.LoadFiles(bf)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newSchemaRepo serves the chart built from top (and sub); "REPO" in any
// file or document stands for the repository's URL.
func newSchemaRepo(t *testing.T, top, sub map[string]string, docs map[string]string) *schemaRepo {
	t.Helper()
	s := &schemaRepo{docs: map[string]string{}}
	var index, archive []byte
	var archiveName string
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		switch {
		case r.URL.Path == "/index.yaml":
			_, _ = w.Write(index)
		case r.URL.Path == "/"+archiveName:
			_, _ = w.Write(archive)
		case strings.HasPrefix(r.URL.Path, "/redirect/"):
			http.Redirect(w, r, strings.TrimPrefix(r.URL.Path, "/redirect/"), http.StatusFound)
		case s.docs[r.URL.Path] != "":
			_, _ = w.Write([]byte(s.docs[r.URL.Path]))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	fill := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = strings.ReplaceAll(v, "REPO", s.URL)
		}
		return out
	}
	s.docs = fill(docs)
	c := chartOf(t, fill(top))
	if sub != nil {
		c.AddDependency(chartOf(t, fill(sub)))
	}
	p, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if archive, err = os.ReadFile(p); err != nil {
		t.Fatal(err)
	}
	archiveName = filepath.Base(p)
	sum := sha256.Sum256(archive)
	index, _ = yaml.Marshal(map[string]any{"apiVersion": "v1", "entries": map[string]any{
		c.Name(): []any{map[string]any{"apiVersion": "v2", "name": c.Name(), "version": c.Metadata.Version,
			"urls": []string{archiveName}, "digest": hex.EncodeToString(sum[:])}},
	}})
	return s
}

func schemaChart(schema string, extra map[string]string) map[string]string {
	files := map[string]string{
		"Chart.yaml":         "apiVersion: v2\nname: schemas\nversion: 1.0.0\n",
		"values.yaml":        "name: app\n",
		"templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Values.name }}'}\n",
		"values.schema.json": schema,
	}
	for k, v := range extra {
		files[k] = v
	}
	return files
}

func subChart(schema string) map[string]string {
	return map[string]string{
		"Chart.yaml":         "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"values.yaml":        "size: 1\n",
		"templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sub}\n",
		"values.schema.json": schema,
	}
}

// policyRenderer renders as the daemon does: through the URL policy's
// client, which allows only the repository, in workers or in process.
func policyRenderer(t *testing.T, repo *schemaRepo, worker bool) *Renderer {
	t.Helper()
	policy := &netpolicy.Policy{AllowPrefixes: []string{repo.URL + "/"}}
	opts := Options{CacheDir: t.TempDir(), HTTPClient: policy.Client()}
	if worker {
		opts.Worker = testWorker(t)
	}
	r := New(opts)
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func renderSchemas(t *testing.T, r *Renderer, repo *schemaRepo, values map[string]any) error {
	t.Helper()
	_, err := r.Render(context.Background(), Request{RepositoryURL: repo.URL, ChartName: "schemas",
		ReleaseName: "app", ReleaseNamespace: "apps", Values: values})
	return err
}

// hostFile writes a file on this host whose content a schema may try to
// read; the marker must never appear in an error.
func hostFile(t *testing.T) (path, marker string) {
	t.Helper()
	marker = "HOST-FILE-" + strings.ReplaceAll(t.Name(), "/", "-")
	path = filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(path, []byte(`{"const": "`+marker+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, marker
}

// TestSchemaRefsFollowTheURLPolicy: whatever a chart's values.schema.json
// (or a subchart's) names through $ref, $schema, $dynamicRef or $id, it
// reads only the chart's own files and what the URL policy allows: the
// loopback trap receives no request, the host file's content appears in
// no error, and the error names the chart, the schema file and the
// reference. In workers (as the daemon runs) and in process.
func TestSchemaRefsFollowTheURLPolicy(t *testing.T) {
	host, marker := hostFile(t)
	rel := strings.Repeat("../", 12) + strings.TrimPrefix(host, "/")
	enc := strings.ReplaceAll(url.PathEscape(host), "%2F", "/%2e%2e/%2e%2e/%2F")
	cases := []struct {
		name, schema string
		sub          string // the subchart's schema, when set
		want         string // in the error
		refused      bool   // errors.Is(ErrSchemaRef)
	}{
		{name: "$ref http to loopback", schema: `{"$ref": "TRAP/ref.json"}`, want: "refused by the URL policy", refused: true},
		{name: "$schema to loopback", schema: `{"$schema": "TRAP/meta.json"}`, want: "refused by the URL policy", refused: true},
		{name: "$ref file absolute", schema: `{"$ref": "file://` + host + `"}`, want: "not a file of the chart", refused: true},
		{name: "$ref file relative with ..", schema: `{"properties": {"name": {"$ref": "` + rel + `"}}}`, want: "not a file of the chart", refused: true},
		{name: "$ref file URL-encoded ..", schema: `{"$ref": "file:///%2e%2e/%2e%2e` + enc + `"}`, want: "not a file of the chart", refused: true},
		{name: "$ref file with a host", schema: `{"$ref": "file://localhost` + host + `"}`, want: "only its chart's own files", refused: true},
		{name: "$id rebases to http", schema: `{"$id": "TRAP/base/", "properties": {"name": {"$ref": "x.json"}}}`, want: "refused by the URL policy", refused: true},
		{name: "$id rebases to another file", schema: `{"$id": "file://` + filepath.Dir(host) + `/", "properties": {"name": {"$ref": "secret.json"}}}`, want: "not a file of the chart", refused: true},
		{name: "$dynamicRef", schema: `{"$schema": "https://json-schema.org/draft/2020-12/schema", "$dynamicRef": "TRAP/d.json#meta"}`, want: "refused by the URL policy", refused: true},
		{name: "unknown scheme", schema: `{"$ref": "ftp://example.com/x.json"}`, want: "only the chart's files and http(s) URLs", refused: true},
		{name: "redirect to loopback", schema: `{"$ref": "REPO/redirect/TRAP/r.json"}`, want: "refused by the URL policy", refused: true},
		{name: "subchart $ref to loopback", schema: `{}`, sub: `{"$ref": "TRAP/sub.json"}`, want: "chart sub: values.schema.json", refused: true},
		{name: "subchart $ref to a host file", schema: `{}`, sub: `{"$ref": "file://` + host + `"}`, want: "chart sub: values.schema.json", refused: true},
		{name: "document too large", schema: `{"$ref": "REPO/huge.json"}`, want: "larger than"},
		{name: "too many documents", schema: `{"$ref": "REPO/chain/0.json"}`, want: "more than 32 documents"},
		{name: "not JSON", schema: `{"$ref": "REPO/plain.txt"}`, want: "not a JSON document"},
	}
	docs := map[string]string{
		"/huge.json": `{"description": "` + strings.Repeat("x", maxSchemaSize) + `"}`,
		"/plain.txt": "plain text " + marker[:4],
	}
	for i := range 40 {
		docs[fmt.Sprintf("/chain/%d.json", i)] = fmt.Sprintf(`{"$ref": "%d.json"}`, i+1)
	}
	for _, worker := range []bool{true, false} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s worker=%v", tc.name, worker), func(t *testing.T) {
				var sub map[string]string
				if tc.sub != "" {
					sub = subChart(tc.sub)
				}
				trap := newTrap(t)
				if sub != nil {
					sub["values.schema.json"] = strings.ReplaceAll(sub["values.schema.json"], "TRAP", trap.URL)
				}
				repo := newSchemaRepo(t, schemaChart(strings.ReplaceAll(tc.schema, "TRAP", trap.URL), nil), sub, docs)
				err := renderSchemas(t, policyRenderer(t, repo, worker), repo, map[string]any{"sub": map[string]any{"size": 2}})
				if err == nil {
					t.Fatal("rendered")
				}
				msg := err.Error()
				if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "values.schema.json") {
					t.Errorf("error lacks %q or the schema file:\n%s", tc.want, msg)
				}
				if strings.Contains(msg, marker) || strings.Contains(msg, "TRAP-CONTENT") {
					t.Errorf("error echoes content read outside the chart:\n%s", msg)
				}
				if errors.Is(err, ErrSchemaRef) != tc.refused {
					t.Errorf("errors.Is(ErrSchemaRef) = %v, want %v: %v", !tc.refused, tc.refused, err)
				}
				if n := trap.requests.Load(); n != 0 {
					t.Errorf("the loopback trap received %d requests", n)
				}
			})
		}
	}
}

// TestSchemaReadsChartFilesAndAllowedURLs: what a schema may read still
// works: the chart's own files (relative to values.schema.json), a URL
// under the policy's prefix, and the known drafts' meta-schemas, which
// come built in (json-schema.org is not allowed here, so a fetch would
// fail). Values that break a rule of each fail with Helm's message.
func TestSchemaReadsChartFilesAndAllowedURLs(t *testing.T) {
	for _, draft := range []string{"http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema"} {
		for _, worker := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s worker=%v", draft, worker), func(t *testing.T) {
				schema := `{"$schema": "` + draft + `", "properties": {
					"name": {"$ref": "schemas/defs.json#/definitions/name"},
					"port": {"$ref": "REPO/remote/port.json"}}}`
				repo := newSchemaRepo(t, schemaChart(schema, map[string]string{
					"schemas/defs.json": `{"definitions": {"name": {"type": "string", "maxLength": 5}}}`,
				}), nil, map[string]string{"/remote/port.json": `{"type": "integer", "maximum": 9}`})
				r := policyRenderer(t, repo, worker)
				if err := renderSchemas(t, r, repo, map[string]any{"port": 8}); err != nil {
					t.Fatalf("good values: %v", err)
				}
				err := renderSchemas(t, r, repo, map[string]any{"name": "too-long", "port": 10})
				want := "chart schemas 1.0.0: values don't meet the specifications of the schema(s) in the following chart(s):\n" +
					"schemas:\n- at '/name': maxLength: got 8, want 5\n- at '/port': maximum: got 10, want 9\n"
				if err == nil || sortedLines(err.Error()) != sortedLines(want) {
					t.Errorf("got  %v\nwant %s", err, want)
				}
			})
		}
	}
}

// TestSchemaValidationMatchesHelm: on schemas that read nothing outside
// the chart, validateSchemas and Helm's chartutil.ValidateAgainstSchema
// agree: the same pass or fail and the same message, subcharts included.
func TestSchemaValidationMatchesHelm(t *testing.T) {
	schemas := []string{
		`{"type": "object", "required": ["name", "port"], "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}, "port": {"type": "integer"}}}`,
		`{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"name": {"enum": ["a", "b"]}, "port": {}, "sub": {}}, "additionalProperties": false}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {"n": {"type": "number", "minimum": 3}}, "properties": {"port": {"$ref": "#/$defs/n"}}}`,
		`{"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"port": {"type": "integer", "maximum": 5, "exclusiveMaximum": true}}}`,
		`{"properties": {"name": {"$ref": "urn:example:unresolved"}}}`,
		`{"type": "object", "properties": {"port": {"oneOf": [{"type": "string"}, {"type": "boolean"}]}}}`,
		`not json`,
	}
	values := []map[string]any{
		{"name": "app", "port": 5},
		{"name": "App-1", "port": "x"},
		{"name": "b", "extra": true},
		{"sub": map[string]any{"size": "big"}},
		{"sub": map[string]any{"size": 3}},
	}
	sub := `{"properties": {"size": {"type": "integer", "maximum": 2}}}`
	for i, schema := range schemas {
		for j, v := range values {
			c := chartOf(t, schemaChart(schema, nil))
			c.AddDependency(chartOf(t, subChart(sub)))
			vals, err := chartutil.CoalesceValues(c, v)
			if err != nil {
				t.Fatal(err)
			}
			ours := validateSchemas(c, vals, nil)
			helm := chartutil.ValidateAgainstSchema(c, vals)
			// the library lists errors of sibling properties in map order
			if (ours == nil) != (helm == nil) || (ours != nil && sortedLines(ours.Error()) != sortedLines(helm.Error())) {
				t.Errorf("schema %d, values %d:\nours: %v\nhelm: %v", i, j, ours, helm)
			}
		}
	}
}

// TestSchemaRecursionEnds: schemas that refer to themselves, directly or
// through another chart file, compile and validate (or fail) without
// running on.
func TestSchemaRecursionEnds(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  string // "" renders
	}{
		"self":       {map[string]string{"values.schema.json": `{"properties": {"name": {"$ref": "#"}}, "$ref": "#"}`}, "causing reference cycle"},
		"two files":  {map[string]string{"values.schema.json": `{"$ref": "a.json"}`, "a.json": `{"$ref": "b.json"}`, "b.json": `{"$ref": "a.json"}`}, "causing reference cycle"},
		"dynamicRef": {map[string]string{"values.schema.json": `{"$schema": "https://json-schema.org/draft/2020-12/schema", "$dynamicAnchor": "m", "properties": {"name": {"$dynamicRef": "#m"}}}`}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			repo := newSchemaRepo(t, schemaChart(tc.files["values.schema.json"], tc.files), nil, nil)
			err := renderSchemas(t, policyRenderer(t, repo, true), repo, map[string]any{"name": map[string]any{"name": "x"}})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestChartDependencyFollowsURLPolicy: a dependency's repository is
// fetched through the same policy client: one on loopback, outside the
// allowed prefix, is refused before any request.
func TestChartDependencyFollowsURLPolicy(t *testing.T) {
	for _, worker := range []bool{true, false} {
		trap := newTrap(t)
		files := schemaChart(`{}`, nil)
		files["Chart.yaml"] += "dependencies:\n- name: cache\n  version: 0.3.1\n  repository: " + trap.URL + "\n"
		repo := newSchemaRepo(t, files, nil, nil)
		err := renderSchemas(t, policyRenderer(t, repo, worker), repo, nil)
		if err == nil || !errors.Is(err, netpolicy.ErrRefused) {
			t.Errorf("worker=%v: got %v, want the URL policy's refusal", worker, err)
		}
		if n := trap.requests.Load(); n != 0 {
			t.Errorf("worker=%v: the loopback trap received %d requests", worker, n)
		}
	}
}
