package commitstatus

import (
	"context"
	"fmt"

	"code.gitea.io/sdk/gitea"
)

// giteaHost sets statuses through Gitea's SDK (Forgejo speaks the same
// API): POST /api/v1/repos/{owner}/{repo}/statuses/{sha}, with
// "Authorization: token ...".
type giteaHost struct {
	cfg         Config
	owner, repo string
}

func newGitea(c Config, owner, repo string) (Host, error) {
	if c.BaseURL == "" {
		return nil, fmt.Errorf("commit status gitea: the server's address is needed (--commit-status-url)")
	}
	return &giteaHost{cfg: c, owner: owner, repo: repo}, nil
}

// client is made per call: the SDK takes its context per client. It is
// told not to ask the server's version first (SetGiteaVersion("")).
func (h *giteaHost) client(ctx context.Context) (*gitea.Client, error) {
	return gitea.NewClient(h.cfg.BaseURL, gitea.SetHTTPClient(h.cfg.httpClient()), gitea.SetToken(h.cfg.Token),
		gitea.SetGiteaVersion(""), gitea.SetContext(ctx))
}

var giteaStates = map[State]gitea.StatusState{
	Pending: gitea.StatusPending,
	Success: gitea.StatusSuccess,
	Failure: gitea.StatusFailure,
}

func (h *giteaHost) SetStatus(ctx context.Context, sha string, st Status) error {
	c, err := h.client(ctx)
	if err != nil {
		return fmt.Errorf("gitea %s/%s: %w", h.owner, h.repo, err)
	}
	_, _, err = c.CreateStatus(h.owner, h.repo, sha, gitea.CreateStatusOption{
		State: giteaStates[st.State], TargetURL: st.TargetURL, Description: st.Description, Context: st.Context,
	})
	if err != nil {
		return fmt.Errorf("gitea %s/%s: commit %s: %w", h.owner, h.repo, sha, err)
	}
	return nil
}
