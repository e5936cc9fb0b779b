package repo

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pa55word@host/repo.git":          "https://redacted@host/repo.git",
		"https://ghp_token123@github.com/o/r.git":      "https://redacted@github.com/o/r.git",
		"https://host/repo.git":                        "https://host/repo.git",
		"ssh://git@host:2222/repo.git":                 "ssh://git@host:2222/repo.git",
		"ssh://git:secret@host/repo.git":               "ssh://git:redacted@host/repo.git",
		"git@github.com:org/repo.git":                  "git@github.com:org/repo.git",
		"/srv/git/fleet":                               "/srv/git/fleet",
		`Get "https://u:p4ss@h/x": connection refused`: `Get "https://redacted@h/x": connection refused`,
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseEndpoint(t *testing.T) {
	for in, want := range map[string]endpoint{
		"https://u:p@h/r.git":      {proto: protoHTTP, url: "https://h/r.git", display: "https://h/r.git", user: "u", password: "p"},
		"http://h:8080/r.git":      {proto: protoHTTP, url: "http://h:8080/r.git", display: "http://h:8080/r.git"},
		"ssh://git@h:2222/r.git":   {proto: protoSSH, url: "ssh://git@h:2222/r.git", display: "ssh://git@h:2222/r.git", user: "git", hostport: "h:2222"},
		"git@github.com:org/r.git": {proto: protoSSH, url: "git@github.com:org/r.git", display: "git@github.com:org/r.git", user: "git", hostport: "github.com:22"},
		"file:///srv/fleet":        {proto: protoLocal, url: "/srv/fleet", display: "/srv/fleet", path: "/srv/fleet"},
		"/srv/fleet":               {proto: protoLocal, url: "/srv/fleet", display: "/srv/fleet", path: "/srv/fleet"},
		"ssh://git:pw@h/r.git":     {proto: protoSSH, url: "ssh://git@h/r.git", display: "ssh://git@h/r.git", user: "git", hostport: "h:22"},
	} {
		got, err := parseEndpoint(in)
		if err != nil || got != want {
			t.Errorf("parseEndpoint(%q) = %+v, %v\nwant %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://h/r"} {
		if _, err := parseEndpoint(bad); err == nil {
			t.Errorf("parseEndpoint(%q) accepted", bad)
		}
	}
}

func TestAuthNeverPrintsSecrets(t *testing.T) {
	a := Auth{Username: "u", Password: "top-secret-pw", BearerToken: "top-secret-token", SSHKeyPassphrase: "top-secret-pass", SSHPrivateKey: []byte("top-secret-key")}
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("auth", "auth", a, "opts", Options{Auth: a})
	for _, s := range []string{fmt.Sprint(a), fmt.Sprintf("%+v", a), fmt.Sprintf("%#v", a), fmt.Sprintf("%+v", Options{Auth: a}), logs.String()} {
		if strings.Contains(s, "top-secret") {
			t.Errorf("secret printed: %s", s)
		}
	}
}

// A failing source logs and returns errors without its credentials, even
// when they came in the URL.
func TestNoSecretsInLogsOrErrors(t *testing.T) {
	root := t.TempDir()
	newUpstream(t, root, "fleet.git")
	srv := newHTTPServer(t, root, basicAuth("alice", "right-pass"))
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	url := strings.Replace(srv.HTTPAddress(), "http://", "http://alice:url-secret-77@", 1) + "/fleet.git"
	src, err := NewSource(Options{URL: url, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(src, WatchOptions{Interval: time.Hour, Backoff: Backoff{Initial: time.Millisecond, Max: time.Millisecond}})
	ctx, cancel := context.WithCancel(context.Background())
	var errs []string
	_ = w.Run(ctx, func(ev Event) {
		errs = append(errs, ev.Err.Error())
		if len(errs) == 3 {
			cancel()
		}
	})
	all := strings.Join(errs, "\n") + logs.String()
	if strings.Contains(all, "url-secret-77") || !strings.Contains(all, "authentication failed") {
		t.Fatalf("want authentication errors without the password:\n%s", all)
	}
}

func TestScrub(t *testing.T) {
	got := scrub(`dial "https://bob:hunter22@h/x" failed: token abcd1234 rejected`, []string{"abcd1234", "", "ab"})
	if strings.Contains(got, "hunter22") || strings.Contains(got, "abcd1234") {
		t.Fatalf("scrub left a secret: %s", got)
	}
}

func TestCanonicalURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://github.com/org/fleet.git":         "github.com/org/fleet",
		"https://bot:secret@GitHub.com/org/fleet/": "github.com/org/fleet",
		"ssh://git@github.com:22/org/fleet.git":    "github.com/org/fleet",
		"git@github.com:org/fleet":                 "github.com/org/fleet",
		"file:///srv/git/fleet.git":                "/srv/git/fleet.git",
		"/srv/git/fleet":                           "/srv/git/fleet",
	} {
		if got, err := CanonicalURL(raw); err != nil || got != want {
			t.Errorf("CanonicalURL(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}
