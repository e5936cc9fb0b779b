package commitstatus

import (
	"strings"
	"testing"
)

func TestRepoFromURL(t *testing.T) {
	cases := []struct{ url, host, path, err string }{
		{"https://github.com/acme/fleet.git", "github.com", "acme/fleet", ""},
		{"https://github.com/acme/fleet", "github.com", "acme/fleet", ""},
		{"https://user@gitlab.example.com:8443/platform/infra/fleet.git/", "gitlab.example.com", "platform/infra/fleet", ""},
		{"ssh://git@gitea.example.com:2222/acme/fleet.git", "gitea.example.com", "acme/fleet", ""},
		{"git@bitbucket.org:acme/fleet.git", "bitbucket.org", "acme/fleet", ""},
		{"file:///srv/fleet", "", "", "a file URL names no Git host; give --commit-status-repo"},
		{"/srv/fleet", "", "", "not an https://, ssh:// or git@host:path URL"},
		{"https://github.com/fleet.git", "", "", `its path "fleet" is not owner/repo`},
	}
	for _, c := range cases {
		host, path, err := RepoFromURL(c.url)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.url, err, c.err)
			}
			continue
		}
		if err != nil || host != c.host || path != c.path {
			t.Errorf("%s: got %q %q %v, want %q %q", c.url, host, path, err, c.host, c.path)
		}
	}
}

func TestNewHostRefuses(t *testing.T) {
	cases := []struct {
		c   Config
		err string
	}{
		{Config{Provider: "github", Repo: "acme/fleet"}, "commit status github: no token"},
		{Config{Provider: "azure", Repo: "acme/fleet", Token: "t"}, `commit status provider "azure": not one of github, gitlab, gitea, bitbucket`},
		{Config{Provider: "github", Repo: "acme", Token: "t"}, `commit status repository "acme": want owner/repo`},
		{Config{Provider: "github", Repo: "a/b/c", Token: "t"}, `commit status repository "a/b/c": want owner/repo`},
		{Config{Provider: "gitlab", Repo: "fleet/", Token: "t"}, `want group/project`},
		{Config{Provider: "gitea", Repo: "acme/fleet", Token: "t"}, "commit status gitea: the server's address is needed (--commit-status-url)"},
	}
	for _, c := range cases {
		if _, err := NewHost(c.c); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: error %v, want %q", c.c, err, c.err)
		}
	}
	if _, err := NewHost(Config{Provider: "gitlab", Repo: "group/sub/project", Token: "t"}); err != nil {
		t.Errorf("a GitLab subgroup: %v", err)
	}
}

func TestBitbucketKey(t *testing.T) {
	if k := bitbucketKey(DefaultContext); k != DefaultContext {
		t.Errorf("short key changed: %s", k)
	}
	a, b := bitbucketKey("regatta/rollout/a-very-long-profile-name/production"), bitbucketKey("regatta/rollout/a-very-long-profile-name/production-eu")
	if len(a) != maxBitbucketKey || len(b) != maxBitbucketKey || a == b {
		t.Errorf("long keys: %q %q", a, b)
	}
}
