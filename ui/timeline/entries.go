package timeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	yaml "go.yaml.in/yaml/v3"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/ui"
)

// cachedEntry is a timeline entry and the parent commit it was computed
// against ("": none on the branch).
type cachedEntry struct {
	entry  ui.Entry
	parent string
}

// Timeline lists up to n status commits of the branch (n <= 0: all of
// them), newest first, down to the oldest kept, which is marked Folded
// when a fold of the history left it. Entries are computed once per
// commit; callers must not modify them.
func (r *Reader) Timeline(ctx context.Context, n int) ([]ui.Entry, error) {
	c, err := r.current(ctx)
	if err != nil {
		return nil, err
	}
	if n <= 0 || n > len(c.commits) {
		n = len(c.commits)
	}
	out := make([]ui.Entry, n)
	revs := map[string]string{} // record file hash -> its sourceRevision
	for i := n - 1; i >= 0; i-- {
		var prev *ui.Entry
		if i+1 < n && c.parent(i) == i+1 {
			prev = &out[i+1]
		}
		if out[i], err = r.entry(ctx, c, i, prev, revs); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// entry is the timeline entry of the commit at position i; prev is its
// parent's when at hand.
func (r *Reader) entry(ctx context.Context, c *chain, i int, prev *ui.Entry, revs map[string]string) (ui.Entry, error) {
	cm, parent := c.commits[i], ""
	if p := c.parent(i); p >= 0 {
		parent = c.commits[p].SHA
	}
	r.mu.RLock()
	ce, ok := r.entries[cm.SHA]
	r.mu.RUnlock()
	if ok && ce.parent == parent {
		return ce.entry, nil
	}
	e, err := newEntry(ctx, c.repo, cm, parent, prev, revs)
	if err != nil {
		return ui.Entry{}, err
	}
	r.mu.Lock()
	if _, onBranch := r.chain.index[cm.SHA]; onBranch { // not rewritten meanwhile
		r.entries[cm.SHA] = cachedEntry{entry: e, parent: parent}
	}
	r.mu.Unlock()
	return e, nil
}

// pruneEntries forgets the entries of commits no longer on the branch (a
// fold rewrote them); r.mu is held.
func (r *Reader) pruneEntries() {
	for sha := range r.entries {
		if _, ok := r.chain.index[sha]; !ok {
			delete(r.entries, sha)
		}
	}
}

// newEntry computes the entry of cm from the files it changed since
// parent ("": none on the branch).
func newEntry(ctx context.Context, g *repo.Repository, cm repo.Commit, parent string, prev *ui.Entry, revs map[string]string) (ui.Entry, error) {
	e := ui.Entry{Commit: cm.SHA, Time: cm.Time}
	if parent == "" && (cm.Trailer(repo.TrailerFoldedFrom) != "" || len(cm.Parents) > 0) {
		e.Folded = true
		return e, fleetRevisions(ctx, g, cm, nil, nil, &e)
	}
	changes, err := g.ChangedFiles(ctx, parent, cm.SHA, status.Dir)
	if err != nil {
		return e, err
	}
	if err := fleetRevisions(ctx, g, cm, changes, prev, &e); err != nil {
		return e, err
	}
	for _, ch := range changes {
		cluster, ok := recordKey(ch.Path)
		if !ok || ch.New == "" {
			continue
		}
		e.Changed++
		rev, err := revisionOf(ctx, g, cm, ch.Path, ch.New, revs)
		if err != nil {
			return e, err
		}
		old, err := revisionOf(ctx, g, cm, ch.Path, ch.Old, revs)
		if err != nil {
			return e, err
		}
		if rev != "" && rev != old {
			e.Arrivals = append(e.Arrivals, ui.Arrival{Cluster: cluster, Revision: rev, Time: cm.Time, Commit: cm.SHA})
		}
	}
	return e, nil
}

// fleetRevisions sets e's revisions from the fleet file of cm: the one
// it changed, else its parent's entry's (prev), else read at cm.
func fleetRevisions(ctx context.Context, g *repo.Repository, cm repo.Commit, changes []repo.FileChange, prev *ui.Entry, e *ui.Entry) error {
	var b []byte
	var err error
	switch ch, changed := fleetChange(changes); {
	case changed && ch.New == "":
		return nil
	case changed:
		b, err = g.Blob(ctx, ch.New)
	case prev != nil:
		e.SourceRevision, e.AppliedRevision = prev.SourceRevision, prev.AppliedRevision
		return nil
	default:
		b, err = readAt(ctx, g, cm.SHA, status.FleetFile)
	}
	var f struct {
		SourceRevision  string `yaml:"sourceRevision"`
		AppliedRevision string `yaml:"appliedRevision"`
	}
	if err == nil && b != nil {
		err = yaml.Unmarshal(b, &f)
	}
	if err != nil {
		return fmt.Errorf("status commit %s: %s: %w", short(cm.SHA), status.FleetFile, err)
	}
	e.SourceRevision, e.AppliedRevision = f.SourceRevision, f.AppliedRevision
	return nil
}

func fleetChange(changes []repo.FileChange) (repo.FileChange, bool) {
	for _, ch := range changes {
		if ch.Path == status.FleetFile {
			return ch, true
		}
	}
	return repo.FileChange{}, false
}

// readAt reads a file at a commit; nil when the commit has none.
func readAt(ctx context.Context, g *repo.Repository, sha, name string) ([]byte, error) {
	t, err := g.Tree(ctx, sha)
	if err != nil {
		return nil, err
	}
	b, err := t.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// revisionOf is the sourceRevision of the record whose file hash is h
// ("" for none), remembered in revs.
func revisionOf(ctx context.Context, g *repo.Repository, cm repo.Commit, file, h string, revs map[string]string) (string, error) {
	if h == "" {
		return "", nil
	}
	if rev, ok := revs[h]; ok {
		return rev, nil
	}
	b, err := g.Blob(ctx, h)
	if err == nil {
		var rev string
		if rev, err = recordRevision(b); err == nil {
			revs[h] = rev
			return rev, nil
		}
	}
	return "", fmt.Errorf("status commit %s: %s: %w", short(cm.SHA), file, err)
}
