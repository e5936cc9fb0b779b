package access

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestNoneOnLoopbackOnly: without authentication the UI may listen on
// loopback only; anywhere else New refuses, naming the flag to set.
func TestNoneOnLoopbackOnly(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:8080": true, "localhost:8080": true, "127.0.0.2:80": true,
		":8080": false, "0.0.0.0:8080": false, "10.0.0.7:8080": false, "[::]:8080": false, "ui.example.com:80": false,
	} {
		for _, mode := range []string{"", ModeNone} {
			_, err := New(Options{Mode: mode, ListenAddr: addr})
			if ok && err != nil {
				t.Errorf("%s %q: %v", addr, mode, err)
			}
			if !ok && (err == nil || !strings.Contains(err.Error(), "--ui-auth kubernetes")) {
				t.Errorf("%s %q: %v, want a refusal naming --ui-auth", addr, mode, err)
			}
		}
	}
	g, err := New(Options{ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	g.Wrap(echo).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if !strings.Contains(rec.Body.String(), `"Fleet":true`) {
		t.Errorf("mode none: %s, want a Fleet viewer", rec.Body)
	}
}

// TestNewNamesWhatIsMissing: settings that cannot work fail at New,
// naming the flag.
func TestNewNamesWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Mode: "ldap"}, `--ui-auth "ldap"`},
		{Options{Mode: ModeKubernetes}, "--management-kubeconfig"},
		{Options{Mode: ModeOIDC}, "--ui-oidc-client-id, --ui-oidc-issuer, --ui-oidc-redirect-url"},
		{Options{Mode: ModeOIDC, OIDC: OIDCOptions{Issuer: "https://id", ClientID: "c", RedirectURL: "https://ui/callback"}}, "--ui-oidc-redirect-url"},
		{Options{Mode: ModeOIDC, OIDC: OIDCOptions{Issuer: "https://id", ClientID: "c", RedirectURL: "https://ui/-/callback"}}, "--ui-oidc-fleet-groups"},
		{Options{Mode: ModeOIDC, CookieKey: []byte("short"), OIDC: OIDCOptions{Issuer: "https://id", ClientID: "c", RedirectURL: "https://ui/-/callback", FleetGroups: []string{"ops"}}}, "--ui-cookie-key-file"},
	} {
		if _, err := New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// TestFlagsBuildOptions: the flags, parsed as a command parses them,
// give the Gate's options, reading the secret and key files.
func TestFlagsBuildOptions(t *testing.T) {
	dir := t.TempDir()
	secret, key := filepath.Join(dir, "secret"), filepath.Join(dir, "key")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte(strings.Repeat("k", 40)), 0o600); err != nil {
		t.Fatal(err)
	}
	var f Flags
	fl := pflag.NewFlagSet("ui", pflag.ContinueOnError)
	f.Register(fl)
	err := fl.Parse([]string{"--ui-auth=oidc", "--ui-oidc-issuer=https://id.example.com", "--ui-oidc-client-id=regatta",
		"--ui-oidc-client-secret-file=" + secret, "--ui-oidc-redirect-url=https://ui.example.com/-/callback",
		"--ui-oidc-fleet-groups=ops,sre", "--ui-oidc-tenant-groups=a=team-a,a=team-a2", "--ui-oidc-tenant-groups=b=team-b",
		"--ui-cookie-key-file=" + key})
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.Options(":8080", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := OIDCOptions{Issuer: "https://id.example.com", ClientID: "regatta", ClientSecret: "s3cret",
		RedirectURL: "https://ui.example.com/-/callback", Scopes: []string{"profile", "email"}, UserClaim: "email", GroupsClaim: "groups",
		FleetGroups: []string{"ops", "sre"}, TenantGroups: map[string][]string{"a": {"team-a", "team-a2"}, "b": {"team-b"}}}
	if !reflect.DeepEqual(o.OIDC, want) || string(o.CookieKey) != strings.Repeat("k", 40) || o.FleetName != "fleet" {
		t.Errorf("options %+v\nwant OIDC %+v", o, want)
	}
	if _, err := f.Gate(":8080", nil, nil, nil); err != nil {
		t.Errorf("Gate: %v", err)
	}
	kube := admin(t)
	if o, _ := f.Options(":8080", kube, nil, nil); o.Kube != nil {
		t.Error("OIDC with group flags is authorised by the management cluster, want by the groups")
	}
	g := f
	g.OIDCFleetGroups, g.OIDCTenantGroups = nil, nil
	if o, _ := g.Options(":8080", kube, nil, nil); o.Kube == nil {
		t.Error("OIDC without group flags is not authorised by the management cluster")
	}
	f.OIDCTenantGroups = []string{"team-a"}
	if _, err := f.Options(":8080", nil, nil, nil); err == nil || !strings.Contains(err.Error(), "--ui-oidc-tenant-groups \"team-a\": want TENANT=GROUP") {
		t.Errorf("bad pair: %v", err)
	}
	f.OIDCTenantGroups, f.OIDCClientSecretFile = nil, filepath.Join(dir, "missing")
	if _, err := f.Options(":8080", nil, nil, nil); err == nil || !strings.Contains(err.Error(), "--ui-oidc-client-secret-file") {
		t.Errorf("missing secret file: %v", err)
	}
}

// TestSafeNext: the login's return address stays on this site.
func TestSafeNext(t *testing.T) {
	for next, want := range map[string]string{
		"/clusters/prod-1?at=2026-01-01T00:00:00Z": "/clusters/prod-1?at=2026-01-01T00:00:00Z",
		"/":                      "/",
		"":                       "/",
		"https://evil.example":   "/",
		"//evil.example/x":       "/",
		"/\\evil.example":        "/",
		"/\t/evil.example":       "/",
		"/\n/evil.example":       "/",
		"clusters/x":             "/",
		"/-/login?next=/x":       "/",
		"/-/callback?code=x":     "/",
		"/profiles/web%2F%2Fx":   "/profiles/web%2F%2Fx",
		"javascript:alert(1)//x": "/",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}
