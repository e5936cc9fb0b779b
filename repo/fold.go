package repo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	gitsideband "github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	gitclient "github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/storage/memory"
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
// the folded commits reach are no longer fetched by a clone. Where the
// server filters fetches only commit objects travel (keptCommits): the
// kept ones in, the new ones out.
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
	chain, more, err := s.keptCommits(ctx, branch, tip, keep)
	if err != nil {
		return res, err
	}
	res.Kept = len(chain)
	if !more {
		return res, nil
	}
	out := memory.NewStorage()
	head, written, err := rewriteChain(out, chain)
	if err != nil {
		return res, s.wrap("fold", err)
	}
	return s.pushFold(ctx, branch, tip, head, func() (io.Reader, error) { return packOf(out, written) }, res)
}

// keptCommits reads up to keep commits from tip down its first parents,
// and whether history goes on beyond them. Where the server can filter a
// fetch, only those commit objects are fetched, into a store of their own:
// a fold needs no tree nor file of them, and fetching the trees and
// records of 1,000 status commits of 1,000 clusters took an in-memory
// clone's heap up by about 550 MiB. Otherwise the branch is fetched to
// that depth into the clone.
func (s *Source) keptCommits(ctx context.Context, branch string, tip plumbing.Hash, keep int) ([]*object.Commit, bool, error) {
	var st storer.EncodedObjectStorer = s.store
	commits, ok, err := s.fetchCommitsOnly(ctx, tip, keep)
	switch {
	case err != nil:
		return nil, false, s.wrap("fetch", err)
	case ok:
		st = commits
	default:
		if err := s.fetchDepth(ctx, branch, keep); err != nil {
			return nil, false, s.wrap("fetch", err)
		}
	}
	chain, more, err := firstParents(st, tip, keep)
	if err != nil {
		return nil, false, s.wrap("fold", err)
	}
	return chain, more, nil
}

// fetchCommitsOnly fetches the commits of tip's last depth commits and no
// tree or blob (filter tree:0) into a new in-memory store; ok is false
// when the server does not offer filters.
func (s *Source) fetchCommitsOnly(ctx context.Context, tip plumbing.Hash, depth int) (*memory.Storage, bool, error) {
	ctx, cancel := context.WithCancel(ctx) // closes the session's HTTP connections (see push)
	defer cancel()
	sess, err := s.session(s.ep.url, s.auth, func(c transport.Transport, ep *transport.Endpoint, a transport.AuthMethod) (transport.Session, error) {
		return c.NewUploadPackSession(ep, a)
	})
	if err != nil {
		return nil, false, err
	}
	up := sess.(transport.UploadPackSession)
	defer up.Close()
	adv, err := up.AdvertisedReferencesContext(ctx)
	if err != nil {
		return nil, false, err
	}
	if !adv.Capabilities.Supports(capability.Filter) || !adv.Capabilities.Supports(capability.Shallow) {
		return nil, false, nil
	}
	req := packp.NewUploadPackRequestFromCapabilities(adv.Capabilities)
	if err := req.Capabilities.Set(capability.Filter); err != nil {
		return nil, false, err
	}
	if err := req.Capabilities.Set(capability.Shallow); err != nil {
		return nil, false, err
	}
	req.Wants = []plumbing.Hash{tip}
	req.Depth = packp.DepthCommits(depth)
	req.Filter = packp.FilterTreeDepth(0)
	resp, err := up.UploadPack(ctx, req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Close()
	st := memory.NewStorage()
	if err := packfile.UpdateObjectStorage(st, sideband(req.Capabilities, resp)); err != nil {
		return nil, false, err
	}
	return st, true, nil
}

// sideband demultiplexes a response that uses a side band.
func sideband(l *capability.List, r io.Reader) io.Reader {
	switch {
	case l.Supports(capability.Sideband64k):
		return gitsideband.NewDemuxer(gitsideband.Sideband64k, r)
	case l.Supports(capability.Sideband):
		return gitsideband.NewDemuxer(gitsideband.Sideband, r)
	}
	return r
}

// session opens a transport session to url, with the Source's TLS
// settings.
func (s *Source) session(url string, auth transport.AuthMethod,
	open func(transport.Transport, *transport.Endpoint, transport.AuthMethod) (transport.Session, error)) (transport.Session, error) {
	ep, err := transport.NewEndpoint(url)
	if err != nil {
		return nil, err
	}
	ep.CaBundle, ep.InsecureSkipTLS = s.opts.Auth.CABundle, s.opts.Auth.InsecureSkipTLS
	c, err := gitclient.NewClient(ep)
	if err != nil {
		return nil, err
	}
	return open(c, ep, auth)
}

// pushFold replaces the branch by head if the remote is still at tip,
// sending pack (the new commits: the server has their trees).
func (s *Source) pushFold(ctx context.Context, branch string, tip, head plumbing.Hash, pack func() (io.Reader, error), res FoldResult) (FoldResult, error) {
	err := s.pushLease(ctx, branch, tip, head, pack)
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

// rewriteChain writes chain (newest first) again into st: its oldest
// commit as a root with the same tree, each newer one on the one written
// before it. It returns the new tip and every commit written.
func rewriteChain(st storer.EncodedObjectStorer, chain []*object.Commit) (plumbing.Hash, []plumbing.Hash, error) {
	oldest := chain[len(chain)-1]
	root := *oldest
	root.ParentHashes = nil
	root.Message = foldMessage(oldest)
	head, err := storeCommit(st, &root)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	written := []plumbing.Hash{head}
	for i := len(chain) - 2; i >= 0; i-- {
		c := *chain[i]
		c.ParentHashes = []plumbing.Hash{head}
		if head, err = storeCommit(st, &c); err != nil {
			return plumbing.ZeroHash, nil, err
		}
		written = append(written, head)
	}
	return head, written, nil
}

// packOf is a pack of the objects hs of st.
func packOf(st storer.EncodedObjectStorer, hs []plumbing.Hash) (io.Reader, error) {
	var buf bytes.Buffer
	if _, err := packfile.NewEncoder(&buf, st, false).Encode(hs, 10); err != nil {
		return nil, err
	}
	return &buf, nil
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
// is at expected: the update sent names expected as the ref's old value,
// which the server checks under the ref's lock (and the refs it
// advertised are checked first). pack holds what the server lacks.
func (s *Source) pushLease(ctx context.Context, branch string, expected, commit plumbing.Hash, pack func() (io.Reader, error)) error {
	ctx, cancel := context.WithCancel(ctx) // closes the push's HTTP connection (see push)
	defer cancel()
	sess, err := s.session(s.pushURL(), s.pushAuth, func(c transport.Transport, ep *transport.Endpoint, a transport.AuthMethod) (transport.Session, error) {
		return c.NewReceivePackSession(ep, a)
	})
	if err != nil {
		return s.wrap("push to", err)
	}
	rp := sess.(transport.ReceivePackSession)
	defer rp.Close()
	adv, err := rp.AdvertisedReferencesContext(ctx)
	if err != nil {
		return s.wrap("push to", err)
	}
	dst := branchRef(branch)
	refs, err := adv.AllReferences()
	if err != nil {
		return s.wrap("push to", err)
	}
	if r, ok := refs[dst]; !ok || r.Hash() != expected {
		return s.wrap("push to", fmt.Errorf("%s is no longer at %s", dst, expected))
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(adv.Capabilities)
	req.Commands = []*packp.Command{{Name: dst, Old: expected, New: commit}}
	if req.Packfile, err = packReadCloser(pack); err != nil {
		return s.wrap("push to", err)
	}
	rs, err := rp.ReceivePack(ctx, req)
	if err == nil && rs != nil {
		err = rs.Error()
	}
	if err != nil {
		return s.wrap("push to", err)
	}
	return nil
}

func packReadCloser(pack func() (io.Reader, error)) (io.ReadCloser, error) {
	r, err := pack()
	if err != nil {
		return nil, err
	}
	return io.NopCloser(r), nil
}
