package commitstatus

import (
	"context"
	"fmt"

	"github.com/google/go-github/v89/github"
)

// githubHost sets statuses through go-github: POST
// /repos/{owner}/{repo}/statuses/{sha}.
type githubHost struct {
	c           *github.Client
	owner, repo string
}

func newGitHub(c Config, owner, repo string) (Host, error) {
	opts := []github.ClientOptionsFunc{github.WithHTTPClient(c.httpClient()), github.WithAuthToken(c.Token)}
	if c.BaseURL != "" {
		opts = append(opts, github.WithEnterpriseURLs(c.BaseURL, c.BaseURL))
	}
	gc, err := github.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("commit status github: %w", err)
	}
	return &githubHost{c: gc, owner: owner, repo: repo}, nil
}

func (h *githubHost) SetStatus(ctx context.Context, sha string, st Status) error {
	rs := github.RepoStatus{
		State:       github.Ptr(string(st.State)),
		Context:     github.Ptr(st.Context),
		Description: github.Ptr(st.Description),
	}
	if st.TargetURL != "" {
		rs.TargetURL = github.Ptr(st.TargetURL)
	}
	if _, _, err := h.c.Repositories.CreateStatus(ctx, h.owner, h.repo, sha, rs); err != nil {
		return fmt.Errorf("github %s/%s: commit %s: %w", h.owner, h.repo, sha, err)
	}
	return nil
}
