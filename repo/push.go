package repo

import (
	"context"
	"errors"
	"fmt"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
)

// pushRef is the local ref a commit is pushed from; the branch's own ref
// only moves once the remote accepted the commit.
const pushRef = plumbing.ReferenceName("refs/regatta/push")

// push sends commit to the branch without force, expecting the remote at
// parent (zero: branch absent).
func (s *Source) push(ctx context.Context, branch string, parent, commit plumbing.Hash) error {
	if err := s.store.SetReference(plumbing.NewHashReference(pushRef, commit)); err != nil {
		return s.wrap("push to", err)
	}
	defer s.store.RemoveReference(pushRef)
	// go-git reads the report of a push over HTTP(S) and never closes the
	// response: its connection, the goroutines that serve it and the pack
	// sent stayed for the life of the process, one per status commit.
	// Ending the push's own context when it returns closes them.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	spec := config.RefSpec(fmt.Sprintf("%s:%s", pushRef, branchRef(branch)))
	err := s.remote.PushContext(ctx, &git.PushOptions{
		RemoteName:      remoteName,
		RemoteURL:       s.pushURL(),
		RefSpecs:        []config.RefSpec{spec},
		Auth:            s.pushAuth,
		CABundle:        s.opts.Auth.CABundle,
		InsecureSkipTLS: s.opts.Auth.InsecureSkipTLS,
		Force:           false,
	})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		err = nil
	}
	if err != nil {
		return s.wrap("push to", err)
	}
	if err := s.store.SetReference(plumbing.NewHashReference(branchRef(branch), commit)); err != nil {
		return s.wrap("push to", err)
	}
	return nil
}

// remoteMoved reports whether the remote branch is no longer at parent,
// i.e. whether a failed push lost a race and is worth re-applying.
func (s *Source) remoteMoved(ctx context.Context, branch string, parent plumbing.Hash) bool {
	h, found, err := s.remoteRef(ctx, branch)
	if err != nil {
		return false
	}
	if !found {
		return !parent.IsZero()
	}
	return h != parent
}

// pushURL is where a push goes. For a local repository it is the Git dir
// that holds the objects (the common dir of a linked worktree): go-git
// reads a local remote's objects from that path to find what the remote
// already has, and given a working tree it finds none and walks the whole
// history, which a shallow clone (every restart without --cache-dir) does
// not hold: "object not found".
func (s *Source) pushURL() string {
	if s.ep.path == "" {
		return s.ep.url
	}
	_, common, err := findGitDir(s.ep.path)
	if err != nil {
		return s.ep.url
	}
	return common
}
