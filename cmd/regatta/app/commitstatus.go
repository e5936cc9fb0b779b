package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/regatta-dev/regatta/reconciler/commitstatus"
	"github.com/regatta-dev/regatta/reconciler/status"
)

// commitStatusFlags configure the commit statuses on the fleet
// repository's Git host (docs/operations.md, "Commit statuses").
type commitStatusFlags struct {
	provider  string
	url       string
	repo      string
	tokenFile string
	targetURL string
	context   string
	stages    bool
}

func (c *commitStatusFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&c.provider, "commit-status-provider", "", "set a commit status on each revision of the followed branch (pending, success, failure) on this Git host: "+strings.Join(commitstatus.Providers, ", ")+" (Forgejo: gitea); empty disables")
	fl.StringVar(&c.url, "commit-status-url", "", "the Git host's address for commit statuses: GitHub Enterprise, a self-hosted GitLab or Gitea (default: derived from --repo; github.com, gitlab.com and bitbucket.org need none)")
	fl.StringVar(&c.repo, "commit-status-repo", "", "the repository on the Git host: owner/repo, GitLab group/project, Bitbucket workspace/repo (default: derived from --repo)")
	fl.StringVar(&c.tokenFile, "commit-status-token-file", "", "file holding the Git host token for commit statuses (or $REGATTA_COMMIT_STATUS_TOKEN)")
	fl.StringVar(&c.targetURL, "commit-status-target-url", "", "link shown beside each commit status (default: the fleet dashboard, status/README.md on --status-branch, on the Git host's web pages)")
	fl.StringVar(&c.context, "commit-status-context", commitstatus.DefaultContext, "name of the fleet's commit status (GitHub context, GitLab name, Bitbucket key)")
	fl.BoolVar(&c.stages, "commit-status-stages", false, "also one commit status per rollout stage, e.g. regatta/rollout/web/production: 12/40 applied")
}

// set reports whether any commit status flag was given.
func (c *commitStatusFlags) set() bool {
	return c.provider != "" || c.url != "" || c.repo != "" || c.tokenFile != "" || c.targetURL != "" ||
		c.stages || c.context != commitstatus.DefaultContext
}

// publisher builds the Publisher the flags describe; nil when commit
// statuses are off. repoURL and statusBranch are regatta run's --repo and
// --status-branch; agent is true in agent mode, which never publishes.
func (c *commitStatusFlags) publisher(repoURL, statusBranch string, agent bool, log *slog.Logger) (*commitstatus.Publisher, error) {
	if c.provider == "" {
		if c.set() {
			return nil, usageError("--commit-status-* flags need --commit-status-provider (%s)", strings.Join(commitstatus.Providers, ", "))
		}
		return nil, nil
	}
	if !slices.Contains(commitstatus.Providers, c.provider) {
		return nil, usageError("--commit-status-provider %q: not one of %s (Azure DevOps is not supported)", c.provider, strings.Join(commitstatus.Providers, ", "))
	}
	if agent {
		return nil, usageError("--commit-status-provider: an agent (--cluster) sets no commit statuses; the central daemon, which owns the fleet's status, does")
	}
	cfg, target, err := c.config(repoURL, statusBranch)
	if err != nil {
		return nil, err
	}
	if cfg.Token, err = c.token(); err != nil {
		return nil, err
	}
	host, err := commitstatus.NewHost(cfg)
	if err != nil {
		return nil, usageError("%v", err)
	}
	log.Info("commit statuses", "provider", c.provider, "repo", cfg.Repo, "url", cfg.BaseURL, "stages", c.stages)
	return commitstatus.NewPublisher(host, commitstatus.PublisherOptions{
		Compute: commitstatus.Options{Context: c.context, Stages: c.stages, TargetURL: target},
		Log:     log.With("component", "commit-status"),
	}), nil
}

// config derives the host's address, the repository and the link from
// --repo where the flags do not give them.
func (c *commitStatusFlags) config(repoURL, statusBranch string) (commitstatus.Config, string, error) {
	cfg := commitstatus.Config{Provider: c.provider, BaseURL: c.url, Repo: c.repo}
	host, path, err := commitstatus.RepoFromURL(repoURL)
	if err != nil && c.repo == "" {
		return cfg, "", usageError("--commit-status-repo: %v", err)
	}
	if cfg.Repo == "" {
		cfg.Repo = path
	}
	if cfg.BaseURL == "" && host != "" && !publicHost(c.provider, host) {
		if c.provider == commitstatus.ProviderBitbucket {
			return cfg, "", usageError("--commit-status-provider bitbucket: %s is not bitbucket.org (Bitbucket Data Center's API is not supported); give --commit-status-url for a Bitbucket Cloud API address", host)
		}
		cfg.BaseURL = "https://" + host
	}
	target := c.targetURL
	if target == "" && host != "" && statusBranch != "" {
		target = dashboardURL(c.provider, host, cfg.Repo, statusBranch)
	}
	if target == "" && c.provider == commitstatus.ProviderBitbucket {
		return cfg, "", usageError("--commit-status-provider bitbucket needs a link for each status: give --commit-status-target-url")
	}
	return cfg, target, nil
}

// publicHost tells the provider's public Git host, whose API address the
// client knows.
func publicHost(provider, host string) bool {
	switch provider {
	case commitstatus.ProviderGitHub:
		return host == "github.com" || host == "ssh.github.com"
	case commitstatus.ProviderGitLab:
		return host == "gitlab.com" || host == "altssh.gitlab.com"
	case commitstatus.ProviderBitbucket:
		return host == "bitbucket.org" || host == "altssh.bitbucket.org"
	}
	return false
}

// dashboardURL is the fleet dashboard's page on the Git host's web site.
func dashboardURL(provider, host, repo, branch string) string {
	if strings.HasPrefix(host, "ssh.") || strings.HasPrefix(host, "altssh.") {
		_, host, _ = strings.Cut(host, ".")
	}
	file := branch + "/" + status.Dashboard
	switch provider {
	case commitstatus.ProviderGitLab:
		return fmt.Sprintf("https://%s/%s/-/blob/%s", host, repo, file)
	case commitstatus.ProviderGitea:
		return fmt.Sprintf("https://%s/%s/src/branch/%s", host, repo, file)
	case commitstatus.ProviderBitbucket:
		return fmt.Sprintf("https://%s/%s/src/%s", host, repo, file)
	}
	return fmt.Sprintf("https://%s/%s/blob/%s", host, repo, file)
}

// token reads the token from its file (a mounted Secret) or the
// environment; it is never logged.
func (c *commitStatusFlags) token() (string, error) {
	if c.tokenFile == "" {
		if t := strings.TrimSpace(os.Getenv("REGATTA_COMMIT_STATUS_TOKEN")); t != "" {
			return t, nil
		}
		return "", usageError("--commit-status-provider %s needs --commit-status-token-file (or $REGATTA_COMMIT_STATUS_TOKEN)", c.provider)
	}
	b, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return "", usageError("--commit-status-token-file: %v", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", usageError("--commit-status-token-file %s: the file is empty", c.tokenFile)
	}
	return t, nil
}

// startPublisher runs pub until ctx ends.
func startPublisher(ctx context.Context, pub *commitstatus.Publisher) {
	go pub.Run(ctx)
}

// flushStatuses gives the statuses of a --once run up to
// statusFlushTimeout to reach the Git host before the process exits.
func (f *runFlags) flushStatuses(ctx context.Context, log *slog.Logger) {
	if f.statuses == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, statusFlushTimeout)
	defer cancel()
	if err := f.statuses.Flush(ctx); err != nil {
		log.Warn("exiting before every commit status was set", "error", err)
	}
}

const statusFlushTimeout = 30 * time.Second
