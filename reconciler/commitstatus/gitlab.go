package commitstatus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"
)

// gitlabHost sets statuses through GitLab's client: POST
// /api/v4/projects/{url-encoded path}/statuses/{sha}, with the token in
// PRIVATE-TOKEN.
type gitlabHost struct {
	c       *gitlab.Client
	project string
}

func newGitLab(c Config) (Host, error) {
	opts := []gitlab.ClientOptionFunc{gitlab.WithHTTPClient(c.httpClient()), gitlab.WithoutRetries()}
	if c.BaseURL != "" {
		opts = append(opts, gitlab.WithBaseURL(c.BaseURL))
	}
	gc, err := gitlab.NewClient(c.Token, opts...)
	if err != nil {
		return nil, fmt.Errorf("commit status gitlab: %w", err)
	}
	return &gitlabHost{c: gc, project: c.Repo}, nil
}

// gitlabStates maps a State: a revision being applied is "running".
var gitlabStates = map[State]gitlab.BuildStateValue{
	Pending: gitlab.Running,
	Success: gitlab.Success,
	Failure: gitlab.Failed,
}

func (h *gitlabHost) SetStatus(ctx context.Context, sha string, st Status) error {
	opt := &gitlab.SetCommitStatusOptions{
		State:       gitlabStates[st.State],
		Name:        gitlab.Ptr(st.Context),
		Description: gitlab.Ptr(st.Description),
	}
	if st.TargetURL != "" {
		opt.TargetURL = gitlab.Ptr(st.TargetURL)
	}
	_, _, err := h.c.Commits.SetCommitStatus(h.project, sha, opt, gitlab.WithContext(ctx))
	if alreadySet(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gitlab %s: commit %s: %w", h.project, sha, err)
	}
	return nil
}

// alreadySet tells GitLab's refusal to set the state a status already has
// ("Cannot transition status via :run from :running"), which a restarted
// daemon meets when it sets again what its predecessor set.
func alreadySet(err error) bool {
	var er *gitlab.ErrorResponse
	return errors.As(err, &er) && er.HasStatusCode(http.StatusBadRequest) &&
		strings.Contains(er.Message, "Cannot transition status")
}
