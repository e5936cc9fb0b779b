package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Defaults of a CommitRequest.
const (
	DefaultStatusBranch = "regatta/status"
	DefaultAuthorName   = "regatta"
	DefaultAuthorEmail  = "regatta@users.noreply.regatta.dev"
	DefaultMaxAttempts  = 5
)

// CommitRequest is a set of file changes to commit and push to a branch.
type CommitRequest struct {
	// Branch to commit to. A missing branch is created as an orphan
	// (no parent), unless it is the followed branch.
	Branch string
	// Prefix confines the change to a folder ("status"); every path in
	// Files and Delete must be under it. Empty means the whole tree.
	Prefix string
	// Files maps paths from the repository root to their new content.
	Files map[string][]byte
	// Delete lists paths (files or folders) to remove.
	Delete []string
	// Prune also removes every file under Prefix that is not in Files, so
	// the folder holds exactly Files afterwards.
	Prune bool
	// Author of the commit (also its committer); defaults to
	// DefaultAuthorName and DefaultAuthorEmail.
	Author Signature
	// Message of the commit; Trailers are appended as its last paragraph,
	// e.g. {TrailerSourceRevision, sha}.
	Message  string
	Trailers []Trailer
	// MaxAttempts bounds pushes when the remote moved in between
	// (default DefaultMaxAttempts). Pushes never force.
	MaxAttempts int
	// Rewrite, when set, is asked at every attempt for each file of Files
	// with the parent commit's content of that path (found false when it
	// has none) and returns what to write; write false leaves the parent's
	// file as it is. It lets a writer decide against the commit it builds
	// on, not the one it last read.
	Rewrite func(path string, parent []byte, found bool, proposed []byte) (out []byte, write bool)
}

// CommitResult tells what CommitAndPush did.
type CommitResult struct {
	Committed bool   // false when the tree was already as requested
	SHA       string // the new commit, or the unchanged branch tip
	Attempts  int    // pushes tried
}

// CommitAndPush writes the requested files as a new commit on top of the
// remote branch and pushes it, without force. When the resulting tree
// equals the parent's, nothing is committed. When the push is rejected
// because someone else pushed in between, the branch is fetched again and
// the same change is re-applied on top, up to MaxAttempts times.
func (s *Source) CommitAndPush(ctx context.Context, req CommitRequest) (CommitResult, error) {
	req, err := req.normalized()
	if err != nil {
		return CommitResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.compactIfGrown()
	var res CommitResult
	var lost error
	for res.Attempts < req.MaxAttempts {
		done, err := s.commitAttempt(ctx, req, &res)
		if done {
			return res, err
		}
		lost = err
		if e, ok := err.(*Error); ok && e.Err != nil {
			lost = e.Err
		}
		if err := sleepCtx(ctx, time.Duration(res.Attempts)*100*time.Millisecond); err != nil {
			return res, err
		}
	}
	return res, &Error{Op: "push to", URL: s.ep.display, Kind: ErrPushRejected,
		Err: fmt.Errorf("branch %s kept moving after %d attempts, last: %w", req.Branch, res.Attempts, lost)}
}

// commitAttempt builds the commit on the current remote tip and pushes it.
// It returns done=false, with the push error, when the push lost a race
// and should be retried.
func (s *Source) commitAttempt(ctx context.Context, req CommitRequest, res *CommitResult) (bool, error) {
	parent, found, err := s.syncBranch(ctx, req.Branch, "")
	if err != nil {
		return true, err
	}
	if !found && req.Branch == s.opts.branch() {
		return true, &Error{Op: fmt.Sprintf("commit to branch %q of", req.Branch), URL: s.ep.display, Kind: ErrBranchNotFound}
	}
	commit, changed, err := s.buildCommit(req, parent)
	if err != nil || !changed {
		res.SHA = parent.String()
		if parent.IsZero() {
			res.SHA = ""
		}
		return true, err
	}
	res.Attempts++
	err = s.push(ctx, req.Branch, parent, commit)
	if err == nil {
		res.Committed, res.SHA = true, commit.String()
		s.log.Info("pushed commit", "url", s.ep.display, "branch", req.Branch, "commit", res.SHA)
		return true, nil
	}
	if !s.remoteMoved(ctx, req.Branch, parent) {
		return true, err
	}
	s.log.Info("push lost a race, retrying on top", "url", s.ep.display, "branch", req.Branch, "attempt", res.Attempts)
	return false, err
}

// buildCommit stores the commit of req on parent (zero: orphan): its
// objects are staged, then stored at once.
func (s *Source) buildCommit(req CommitRequest, parent plumbing.Hash) (plumbing.Hash, bool, error) {
	st := newStage(s.store)
	h, changed, err := buildCommit(st, req, parent)
	if err != nil || !changed {
		return h, changed, s.wrap("commit to", err)
	}
	if err := st.keep(s.store); err != nil {
		return plumbing.ZeroHash, false, s.wrap("commit to", err)
	}
	return h, true, nil
}

// buildCommit writes the commit of req on parent into st, and whether it
// changed the parent's tree (when not, nothing is written).
func buildCommit(st storer.EncodedObjectStorer, req CommitRequest, parent plumbing.Hash) (plumbing.Hash, bool, error) {
	var base plumbing.Hash
	if !parent.IsZero() {
		c, err := object.GetCommit(st, parent)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		base = c.TreeHash
	}
	tree, err := buildTree(st, req, base)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	if tree == base || (parent.IsZero() && tree.IsZero()) {
		return plumbing.ZeroHash, false, nil
	}
	if tree.IsZero() {
		if tree, err = writeEmptyTree(st); err != nil {
			return plumbing.ZeroHash, false, err
		}
	}
	h, err := writeCommit(st, req, tree, parent)
	return h, err == nil, err
}

func buildTree(st storer.EncodedObjectStorer, req CommitRequest, base plumbing.Hash) (plumbing.Hash, error) {
	edits := map[string]edit{}
	if req.Prune {
		existing, err := listFiles(st, base, req.Prefix)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		for _, p := range existing {
			edits[p] = edit{del: true}
		}
	}
	for _, p := range req.Delete {
		edits[p] = edit{del: true}
	}
	parents := newTree(st, "", base, time.Time{})
	for p, data := range req.Files {
		if req.Rewrite != nil {
			parent, found, err := readParent(parents, p)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			var write bool
			if data, write = req.Rewrite(p, parent, found, data); !write {
				delete(edits, p) // the parent's file stays, pruned or deleted or not
				continue
			}
		}
		h, err := writeBlob(st, data)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		edits[p] = edit{blob: h}
	}
	return applyEdits(st, base, edits)
}

func writeCommit(st storer.EncodedObjectStorer, req CommitRequest, tree, parent plumbing.Hash) (plumbing.Hash, error) {
	sig := object.Signature{Name: req.Author.Name, Email: req.Author.Email, When: time.Now()}
	c := &object.Commit{
		Author: sig, Committer: sig,
		Message:  formatMessage(req.Message, req.Trailers),
		TreeHash: tree,
	}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// normalized applies defaults and checks paths.
func (req CommitRequest) normalized() (CommitRequest, error) {
	req.Branch = firstNonEmpty(req.Branch, DefaultStatusBranch)
	req.Author.Name = firstNonEmpty(req.Author.Name, DefaultAuthorName)
	req.Author.Email = firstNonEmpty(req.Author.Email, DefaultAuthorEmail)
	req.Message = firstNonEmpty(req.Message, "Update status")
	if req.MaxAttempts <= 0 {
		req.MaxAttempts = DefaultMaxAttempts
	}
	req.Prefix = strings.Trim(path.Clean("/"+req.Prefix), "/")
	trailers := make([]Trailer, len(req.Trailers)) // the caller's slice stays as is
	for i, t := range req.Trailers {
		trailers[i] = Trailer{Key: strings.TrimSpace(t.Key), Value: strings.Join(strings.Fields(t.Value), " ")}
	}
	req.Trailers = trailers
	for p := range req.Files {
		if err := req.checkPath(p); err != nil {
			return req, err
		}
	}
	for _, p := range req.Delete {
		if err := req.checkPath(p); err != nil {
			return req, err
		}
	}
	return req, nil
}

func (req CommitRequest) checkPath(p string) error {
	if !fs.ValidPath(p) || p == "." {
		return fmt.Errorf("commit to %s: invalid path %q", req.Branch, p)
	}
	if req.Prefix != "" && p != req.Prefix && !strings.HasPrefix(p, req.Prefix+"/") {
		return fmt.Errorf("commit to %s: path %q is outside %s/", req.Branch, p, req.Prefix)
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// readParent reads the file at p in the parent tree t (zero root: the
// empty tree); found is false where t holds no file. One Tree decodes each
// folder once: a commit that rewrites every cluster's record reads them all
// from one folder, and decoding that folder for each file made a status
// commit grow with the square of the fleet.
func readParent(t *Tree, p string) ([]byte, bool, error) {
	if t.root.IsZero() {
		return nil, false, nil
	}
	n, err := t.resolve("read", p, false)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	case !n.mode.IsFile():
		return nil, false, nil
	}
	b, err := t.readBlob(n.hash)
	return b, err == nil, err
}
