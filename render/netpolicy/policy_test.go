package netpolicy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	ctx := context.Background()
	open := &Policy{}
	listed := &Policy{AllowPrefixes: []string{"https://charts.example.com/", "http://127.0.0.1:8879/"}}
	registry := &Policy{AllowPrefixes: []string{"oci://127.0.0.1:5000/", "oci://registry.example.com/team-a/"}}
	cases := []struct {
		p    *Policy
		url  string
		want string // "" allowed, else a part of the error
	}{
		{open, "https://93.184.215.14/charts/", ""},
		{open, "http://127.0.0.1:2379/index.yaml", "127.0.0.1 is a loopback address"},
		{open, "http://[::1]:8080/", "::1 is a loopback address"},
		{open, "http://[::ffff:127.0.0.1]/", "127.0.0.1 is a loopback address"},
		{open, "http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"},
		{open, "http://[fd00:ec2::254]/", "the EC2 metadata address"},
		{open, "http://metadata.google.internal/computeMetadata/v1/", "host metadata.google.internal is internal"},
		{open, "http://LOCALHOST./", "host localhost is internal"},
		{open, "http://0.0.0.0:10250/", "the unspecified address"},
		{open, "oci://127.0.0.1:5000/charts", "loopback"},
		{open, "git::https://127.0.0.1/org/repo//base", "loopback"},
		{open, "git@127.0.0.1:org/repo", "loopback"},
		{open, "github.com/org/repo//base?ref=v1", ""},
		{open, "http://2130706433/", "127.0.0.1 is a loopback address"},
		{open, "git::http://0x7f.1/org/repo", "127.0.0.1 is a loopback address"},
		{open, "http://0251.0376.0251.0376/", "169.254.169.254 is a link-local address"},
		{open, "http://1.2.3/", ""},
		{listed, "https://charts.example.com/stable/index.yaml", ""},
		{listed, "http://127.0.0.1:8879/index.yaml", ""},
		{listed, "http://127.0.0.1:8880/index.yaml", "not under any --allow-url-prefix"},
		{listed, "https://charts.example.com.evil.test/", "not under any --allow-url-prefix"},
		// an oci:// prefix allows the registry's requests
		{registry, "http://127.0.0.1:5000/v2/fleet/app/manifests/stable", ""},
		{registry, "https://127.0.0.1:5000/v2/", ""},
		{registry, "https://127.0.0.1:5000/token?scope=repository:fleet/app:pull", ""},
		{registry, "http://127.0.0.1:5001/v2/fleet/app/manifests/stable", "not under any --allow-url-prefix (oci://127.0.0.1:5000/, oci://registry.example.com/team-a/)"},
		{registry, "https://registry.example.com/v2/team-a/app/manifests/1.0.0", ""},
		{registry, "https://registry.example.com/v2/team-b/app/manifests/1.0.0", "not under any --allow-url-prefix"},
		{registry, "https://registry.example.com/team-a/index.yaml", "not under any --allow-url-prefix"},
		{registry, "oci://registry.example.com/team-a/app", ""},
	}
	for _, c := range cases {
		err := c.p.Check(ctx, c.url)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.url, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrRefused)):
			t.Errorf("%s: got %v, want an ErrRefused containing %q", c.url, err, c.want)
		}
	}
}

func TestRefuseInternalAtDial(t *testing.T) {
	for addr, refused := range map[string]bool{
		"127.0.0.1:80": true, "[::1]:443": true, "169.254.169.254:80": true,
		"[fe80::1]:80": true, "93.184.215.14:443": false, "10.0.0.1:443": false,
	} {
		if err := refuseInternal("tcp", addr, nil); (err != nil) != refused {
			t.Errorf("%s: %v, want refused=%v", addr, err, refused)
		}
	}
}

func TestClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	defer other.Close()

	get := func(p *Policy, u string) (string, error) {
		resp, err := p.Client().Get(u)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if _, err := get(&Policy{}, srv.URL+"/index.yaml"); !errors.Is(err, ErrRefused) {
		t.Fatalf("loopback without a prefix: %v, want refused", err)
	}
	allowed := &Policy{AllowPrefixes: []string{srv.URL + "/"}}
	if body, err := get(allowed, srv.URL+"/index.yaml"); err != nil || body != "ok" {
		t.Fatalf("allowed prefix: %q %v", body, err)
	}
	// A redirect out of the allowed prefix to another internal server is refused.
	if _, err := get(allowed, srv.URL+"/redirect?to="+other.URL+"/"); !errors.Is(err, ErrRefused) {
		t.Fatalf("redirect to %s: %v, want refused", other.URL, err)
	}
}
