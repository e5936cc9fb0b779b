package app

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/regatta-dev/regatta/reconciler/agent"
	"github.com/regatta-dev/regatta/repo"
)

type releaseFlags struct {
	repoURL, branch   string
	cluster           string
	statusBranch      string
	authorName, email string
	git               gitFlags
}

func newReleaseAgentCommand(stdout io.Writer) *cobra.Command {
	f := &releaseFlags{}
	cmd := &cobra.Command{
		Use:   "release-agent --repo URL --cluster NAME",
		Short: "Hand a cluster whose agent is gone for good back to the central daemon",
		Long: `A cluster switched from spec.mode: pull back to push is taken over by the
central daemon only once the cluster's agent has recorded on its ref
(regatta-status/<cluster>) that it stopped, after its last pass: never two
writers. An agent that is gone for good (its cluster deleted, its pod never
coming back) cannot record it, and the cluster's status says the central
daemon waits for the agent's release.

release-agent records that release on the agent's ref, as the agent would
have. Run it only when no agent of the cluster runs any more: an agent that
is still running writes to the cluster alongside the central daemon until it
sees the switch. It writes nothing when the central daemon holds the cluster
already, and refuses when the agent's ref moves while it runs (an agent that
is alive releases on its own). The Git credential must be allowed to push
the agent's ref.`,
		Example: `  regatta release-agent --repo https://git.example.com/platform/fleet-infra.git --cluster edge-7 \
      --git-username admin --git-password-file /etc/regatta/admin-token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runReleaseAgent(cmd.Context(), f, stdout)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repoURL, "repo", "", "fleet repository (required)")
	fl.StringVar(&f.branch, "branch", repo.DefaultBranch, "the followed branch")
	fl.StringVar(&f.cluster, "cluster", "", "the cluster whose agent is gone (required)")
	fl.StringVar(&f.statusBranch, "status-branch", DefaultStatusBranch, "the central daemon's status branch")
	fl.StringVar(&f.authorName, "author-name", repo.DefaultAuthorName, "author name of the release commit")
	fl.StringVar(&f.email, "author-email", repo.DefaultAuthorEmail, "author email of the release commit")
	f.git.register(fl)
	return cmd
}

func runReleaseAgent(ctx context.Context, f *releaseFlags, stdout io.Writer) error {
	switch {
	case f.repoURL == "":
		return usageError("--repo is required")
	case f.cluster == "":
		return usageError("--cluster is required")
	}
	if msgs := validation.IsDNS1123Label(f.cluster); len(msgs) > 0 {
		return usageError("--cluster %q is not a cluster name: %s", f.cluster, msgs[0])
	}
	auth, err := f.git.auth()
	if err != nil {
		return err
	}
	src, err := repo.NewSource(repo.Options{URL: f.repoURL, Branch: f.branch, Auth: auth})
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	res, err := agent.Release(ctx, src, f.cluster, f.statusBranch, repo.Signature{Name: f.authorName, Email: f.email})
	if err != nil {
		return err
	}
	if !res.Released {
		fmt.Fprintf(stdout, "cluster %s: nothing to release: the central daemon holds it (turn %d)\n", f.cluster, res.Turn)
		return nil
	}
	fmt.Fprintf(stdout, "cluster %s: released to the central daemon (turn %d, %s at %s)\n", f.cluster, res.Turn, agent.StatusRef(f.cluster), res.Commit)
	return nil
}
