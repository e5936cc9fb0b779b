package reconciler

import (
	"context"
	"fmt"

	"github.com/regatta-dev/regatta/spec"
)

// maxOldRevisions bounds the older revisions kept loaded for pinned pairs.
const maxOldRevisions = 8

// loadRevision reads and loads an older revision of the repository, for
// pairs a rollout keeps at the revision they last applied. Loaded
// revisions are kept (a few) since many pairs share one.
func (d *Daemon) loadRevision(ctx context.Context, sha string) (*revision, error) {
	if cur := d.r.current(); cur != nil && cur.sha == sha {
		return cur, nil
	}
	ro := d.r.rollouts
	ro.oldMu.Lock()
	defer ro.oldMu.Unlock()
	if rev, ok := ro.old[sha]; ok {
		return rev, nil
	}
	if err := d.opts.Source.EnsureCommit(ctx, sha); err != nil {
		return nil, fmt.Errorf("read revision %s: %w", sha, err)
	}
	if v := d.opts.Verify; v != nil { // a rollout's older revision, named by the status branch
		if verdict := v.Check(ctx, sha, ""); !verdict.Accepted {
			return nil, fmt.Errorf("revision %s: %s", sha, verdict.Error())
		}
	}
	tree, err := d.opts.Source.Tree(ctx, sha)
	if err != nil {
		return nil, fmt.Errorf("read revision %s: %w", sha, err)
	}
	repo, diags := spec.Load(tree)
	if err := diags.Err(); err != nil {
		return nil, fmt.Errorf("revision %s: %w", sha, err)
	}
	if len(ro.old) >= maxOldRevisions {
		for k := range ro.old {
			delete(ro.old, k) // any one: they are cheap to read again
			break
		}
	}
	rev := &revision{sha: sha, tree: tree, repo: repo}
	ro.old[sha] = rev
	return rev, nil
}

// pruneRollouts forgets the rollouts of profiles that are gone from the
// repository or no longer have spec.rollout.
func (d *Daemon) pruneRollouts(repo *spec.Repository) {
	keep := map[string]bool{}
	for _, p := range repo.Profiles {
		if p.Spec.Rollout != nil {
			keep[p.Metadata.Name] = true
		}
	}
	d.store.keepRollouts(keep)
	d.r.rollouts.keepOnly(keep)
}
