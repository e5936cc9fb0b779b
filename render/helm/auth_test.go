package helm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

func TestBasicAuthRepository(t *testing.T) {
	files := http.FileServer(http.Dir(filepath.Join("testdata", "repo")))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "fleet" || p != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	req := appRequest(srv.URL)
	_, err := newTestRenderer(t).Render(context.Background(), req)
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusUnauthorized {
		t.Fatalf("without credentials: %v", err)
	}
	req.Username, req.Password = "fleet", "s3cret"
	if _, err := newTestRenderer(t).Render(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

func TestRepositoryErrors(t *testing.T) {
	srv := newRepoServer(t)
	cases := map[string]struct {
		req  func(Request) Request
		want string
	}{
		"missing index": {func(r Request) Request { r.RepositoryURL += "/nope"; return r },
			"chart fleet-app 1.2.0: GET " + srv.URL + "/nope/index.yaml: 404 Not Found"},
		"unknown chart": {func(r Request) Request { r.ChartName = "ghost"; return r },
			`chart ghost 1.2.0: no version matches "1.2.0" in ` + srv.URL + " (available: none)"},
		"bad scheme": {func(r Request) Request { r.RepositoryURL = "ftp://x"; return r },
			`chart fleet-app 1.2.0: repository "ftp://x": want an http(s):// or oci:// URL`},
		"credentials redacted": {func(r Request) Request { r.RepositoryURL = "ftp://user:pw@x"; return r },
			`chart fleet-app 1.2.0: repository "ftp://x": want an http(s):// or oci:// URL`},
		"no source": {func(r Request) Request { r.RepositoryURL = ""; return r },
			"chart fleet-app: a chart needs RepositoryURL and ChartName, or ChartFS"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := newTestRenderer(t).Render(context.Background(), c.req(appRequest(srv.URL)))
			if err == nil || err.Error() != c.want {
				t.Errorf("got  %v\nwant %s", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "pw@") {
				t.Error("credentials leaked")
			}
		})
	}
}
