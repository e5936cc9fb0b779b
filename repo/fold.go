package repo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// TrailerFoldedFrom names, in the first commit of a folded branch, the
// commit whose tree it holds and whose older history it replaced.
const TrailerFoldedFrom = "Regatta-Folded-From"

// FoldResult tells what FoldHistory did.
type FoldResult struct {
	// Folded is true when the branch was rewritten.
	Folded bool
	// Raced is true when the branch moved while it was folded: nothing was
	// pushed, the next fold tries again.
	Raced bool
	// Old and New are the branch's tip before and after.
	Old, New string
	// Kept is the number of commits the branch holds after the fold (or
	// at most, when there was nothing to fold).
	Kept int
}

// FoldHistory bounds the history of branch to its last keep commits
// (first parents): when it holds more, the oldest kept commit becomes a
// root commit with the same tree (its history folded away, its message
// naming the commit it replaces), and the newer ones are written again on
// top with their own trees, authors, dates and messages. Every tree, so
// every file a reader reads at the tip, stays as it was; the objects only
// the folded commits reach are no longer fetched by a clone.
//
// The push is a compare-and-swap: it replaces the branch only if it is
// still at the tip the fold was built from (the server checks it as it
// updates the ref), so a commit pushed meanwhile by another writer is
// never lost; the fold then reports Raced and is tried again later. The
// followed branch is never folded.
func (s *Source) FoldHistory(ctx context.Context, branch string, keep int) (FoldResult, error) {
	if keep < 1 {
		return FoldResult{}, fmt.Errorf("fold %s: keep %d commits: at least 1", branch, keep)
	}
	if branch == s.opts.branch() {
		return FoldResult{}, fmt.Errorf("fold %s: it is the followed branch, whose history is the fleet's own", branch)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.compactIfGrown()
	tip, found, err := s.remoteRef(ctx, branch)
	if err != nil || !found {
		return FoldResult{}, err
	}
	res := FoldResult{Old: tip.String(), New: tip.String()}
	if err := s.fetchDepth(ctx, branch, keep); err != nil {
		return res, s.wrap("fetch", err)
	}
	chain, more, err := firstParents(s.store, tip, keep)
	if err != nil {
		return res, s.wrap("fold", err)
	}
	res.Kept = len(chain)
	if !more {
		return res, nil
	}
	st := newStage(s.store)
	head, err := rewriteChain(st, chain)
	if err != nil {
		return res, s.wrap("fold", err)
	}
	if err := st.keep(s.store); err != nil {
		return res, s.wrap("fold", err)
	}
	return s.pushFold(ctx, branch, tip, head, res)
}

// pushFold pushes head over the branch if the remote is still at tip.
func (s *Source) pushFold(ctx context.Context, branch string, tip, head plumbing.Hash, res FoldResult) (FoldResult, error) {
	err := s.pushLease(ctx, branch, tip, head)
	if err != nil && s.remoteMoved(ctx, branch, tip) {
		s.log.Info("status history fold lost a race, next time", "url", s.ep.display, "branch", branch)
		res.Raced = true
		return res, nil
	}
	if err != nil {
		return res, err
	}
	res.Folded, res.New = true, head.String()
	s.log.Info("folded history", "url", s.ep.display, "branch", branch, "from", res.Old, "to", res.New, "kept", res.Kept)
	return res, nil
}

// firstParents returns up to n commits from tip down its first parents,
// newest first, and whether the oldest of them has a parent (history
// beyond them).
func firstParents(st storer.EncodedObjectStorer, tip plumbing.Hash, n int) ([]*object.Commit, bool, error) {
	var out []*object.Commit
	h := tip
	for len(out) < n {
		c, err := object.GetCommit(st, h)
		if err != nil {
			return nil, false, fmt.Errorf("commit %s: %w", h, err)
		}
		out = append(out, c)
		if len(c.ParentHashes) == 0 {
			return out, false, nil
		}
		h = c.ParentHashes[0]
	}
	return out, true, nil
}

// rewriteChain writes chain (newest first) again: its oldest commit as a
// root with the same tree, each newer one on the one written before it.
// It returns the new tip.
func rewriteChain(st storer.EncodedObjectStorer, chain []*object.Commit) (plumbing.Hash, error) {
	oldest := chain[len(chain)-1]
	root := *oldest
	root.ParentHashes = nil
	root.Message = foldMessage(oldest)
	head, err := storeCommit(st, &root)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for i := len(chain) - 2; i >= 0; i-- {
		c := *chain[i]
		c.ParentHashes = []plumbing.Hash{head}
		if head, err = storeCommit(st, &c); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return head, nil
}

// foldMessage is the message of the commit that replaces c and its
// history: c's own, with a paragraph saying what was folded.
func foldMessage(c *object.Commit) string {
	msg := strings.TrimRight(c.Message, "\n")
	return fmt.Sprintf("%s\n\nThe status history before this commit was folded into it: its tree is %s's, "+
		"older commits are no longer on this branch.\n\n%s: %s\n", msg, c.Hash, TrailerFoldedFrom, c.Hash)
}

func storeCommit(st storer.EncodedObjectStorer, c *object.Commit) (plumbing.Hash, error) {
	c.Hash = plumbing.ZeroHash
	c.PGPSignature = ""
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// pushLease replaces branch by commit, by force, only if the remote branch
// is at expected: the push requires that value in the refs the server
// advertises and sends it as the old value of the update, which the
// server checks under the ref's lock.
func (s *Source) pushLease(ctx context.Context, branch string, expected, commit plumbing.Hash) error {
	if err := s.store.SetReference(plumbing.NewHashReference(pushRef, commit)); err != nil {
		return s.wrap("push to", err)
	}
	defer s.store.RemoveReference(pushRef)
	ctx, cancel := context.WithCancel(ctx) // closes the push's connection (see push)
	defer cancel()
	dst := branchRef(branch)
	err := s.remote.PushContext(ctx, &git.PushOptions{
		RemoteName:        remoteName,
		RemoteURL:         s.pushURL(),
		RefSpecs:          []config.RefSpec{config.RefSpec(fmt.Sprintf("+%s:%s", pushRef, dst))},
		RequireRemoteRefs: []config.RefSpec{config.RefSpec(fmt.Sprintf("%s:%s", expected, dst))},
		Auth:              s.pushAuth,
		CABundle:          s.opts.Auth.CABundle,
		InsecureSkipTLS:   s.opts.Auth.InsecureSkipTLS,
	})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		err = nil
	}
	if err != nil {
		return s.wrap("push to", err)
	}
	if err := s.store.SetReference(plumbing.NewHashReference(dst, commit)); err != nil {
		return s.wrap("push to", err)
	}
	return nil
}
