package commitstatus

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Host sets commit statuses on a Git host.
type Host interface {
	// SetStatus sets st on commit sha of the configured repository.
	SetStatus(ctx context.Context, sha string, st Status) error
}

// The providers NewHost knows.
const (
	ProviderGitHub    = "github"
	ProviderGitLab    = "gitlab"
	ProviderGitea     = "gitea"
	ProviderBitbucket = "bitbucket"
)

// Providers lists the providers NewHost knows, for flag help and errors.
var Providers = []string{ProviderGitHub, ProviderGitLab, ProviderGitea, ProviderBitbucket}

// Config says where statuses go.
type Config struct {
	// Provider is one of Providers (Forgejo speaks Gitea's API: "gitea").
	Provider string
	// BaseURL is the host's address: GitHub Enterprise's
	// (https://ghe.example.com, the client adds /api/v3/), a self-hosted
	// GitLab's or Gitea's (https://git.example.com). Empty: github.com,
	// gitlab.com or api.bitbucket.org; Gitea has no default.
	BaseURL string
	// Repo is owner/repo (GitLab: the project's full path, group/sub/project;
	// Bitbucket: workspace/repo_slug).
	Repo string
	// Token authenticates: a bearer token (GitHub, Bitbucket), a private
	// or project token (GitLab), an access token (Gitea).
	Token string
	// Transport carries the requests (default http.DefaultTransport).
	Transport http.RoundTripper
	// Timeout bounds one request (default 30s).
	Timeout time.Duration
}

// httpClient is a client of its own for each host: go-github wraps its
// client's transport to add the token, so clients are never shared.
func (c Config) httpClient() *http.Client {
	t := c.Transport
	if t == nil {
		t = http.DefaultTransport
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &http.Client{Transport: t, Timeout: timeout}
}

// NewHost builds the Host of c.Provider.
func NewHost(c Config) (Host, error) {
	if c.Token == "" {
		return nil, fmt.Errorf("commit status %s: no token", c.Provider)
	}
	owner, name, err := splitRepo(c.Provider, c.Repo)
	if err != nil {
		return nil, err
	}
	switch c.Provider {
	case ProviderGitHub:
		return newGitHub(c, owner, name)
	case ProviderGitLab:
		return newGitLab(c)
	case ProviderGitea:
		return newGitea(c, owner, name)
	case ProviderBitbucket:
		return newBitbucket(c, owner, name)
	}
	return nil, fmt.Errorf("commit status provider %q: not one of %s", c.Provider, strings.Join(Providers, ", "))
}

// splitRepo checks repo is owner/name (GitLab: group/.../project) and
// splits it at its last slash.
func splitRepo(provider, repo string) (string, string, error) {
	i := strings.LastIndex(repo, "/")
	nested := provider == ProviderGitLab
	if i <= 0 || i == len(repo)-1 || (!nested && strings.Count(repo, "/") != 1) || strings.Contains(repo, "//") {
		want := "owner/repo"
		if nested {
			want = "group/project (or group/subgroup/project)"
		}
		return "", "", fmt.Errorf("commit status repository %q: want %s", repo, want)
	}
	return repo[:i], repo[i+1:], nil
}

// RepoFromURL derives a fleet repository's host and path (owner/repo,
// without .git) from its Git URL: https://host/owner/repo.git,
// ssh://git@host:22/owner/repo.git or git@host:owner/repo.git.
func RepoFromURL(raw string) (host, path string, err error) {
	if !strings.Contains(raw, "://") {
		if at, rest, ok := strings.Cut(raw, "@"); ok && !strings.Contains(at, "/") {
			if h, p, ok := strings.Cut(rest, ":"); ok {
				return h, cleanPath(p), checkPath(raw, cleanPath(p))
			}
		}
		return "", "", fmt.Errorf("repository %q: not an https://, ssh:// or git@host:path URL; give --commit-status-repo", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("repository %q: %w", raw, err)
	}
	switch u.Scheme {
	case "https", "http", "ssh":
	default:
		return "", "", fmt.Errorf("repository %q: a %s URL names no Git host; give --commit-status-repo", raw, u.Scheme)
	}
	p := cleanPath(u.Path)
	return u.Hostname(), p, checkPath(raw, p)
}

func cleanPath(p string) string {
	return strings.TrimSuffix(strings.Trim(p, "/"), ".git")
}

func checkPath(raw, p string) error {
	if !strings.Contains(p, "/") {
		return fmt.Errorf("repository %q: its path %q is not owner/repo; give --commit-status-repo", raw, p)
	}
	return nil
}
