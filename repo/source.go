package repo

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
)

// remoteName is the name of the only remote of a Source's storage.
const remoteName = "origin"

// Source follows one branch of a remote repository in bare storage: the
// branch is mirrored as refs/heads/<branch>, and the embedded Repository
// reads any fetched revision. Network operations are serialized; reads are
// safe at any time from any goroutine.
type Source struct {
	*Repository
	opts     Options
	ep       endpoint
	auth     transport.AuthMethod
	pushAuth transport.AuthMethod // pushes: Options.PushAuth, else auth
	secrets  []string
	remote   *git.Remote
	log      *slog.Logger

	mu       sync.Mutex // serializes network operations and ref updates
	revMu    sync.RWMutex
	revision string // last good revision of the followed branch

	// mem is the in-memory store (no Dir), disk the one on disk (Dir)
	// and diskCache its object cache; locked is their lock, live the
	// trees in use: see compactIfGrown.
	mem       *memory.Storage
	disk      *filesystem.Storage
	diskCache cache.Object
	locked    *lockedStorage
	live      *liveTrees
}

// NewSource prepares a Source. It does not touch the network: call Sync,
// or run a Watcher.
func NewSource(opts Options) (*Source, error) {
	ep, err := parseEndpoint(opts.URL)
	if err != nil {
		return nil, err
	}
	secrets := append(opts.Auth.secrets(), ep.password)
	if ep.proto == protoHTTP && ep.password == "" {
		secrets = append(secrets, ep.user) // a token passed as user name
	}
	auth, err := authMethod(ep, opts.Auth)
	if err != nil {
		return nil, wrapError("configure", ep.display, secrets, err)
	}
	s := &Source{opts: opts, ep: ep, auth: auth, pushAuth: auth, secrets: secrets, log: opts.logger()}
	if p := opts.PushAuth; p != nil {
		pa := opts.Auth
		pa.Username, pa.Password, pa.BearerToken, pa.SSHUser, pa.SSHPrivateKey, pa.SSHKeyPassphrase =
			p.Username, p.Password, p.BearerToken, p.SSHUser, p.SSHPrivateKey, p.SSHKeyPassphrase
		s.secrets = append(s.secrets, pa.secrets()...)
		if s.pushAuth, err = authMethod(ep, pa); err != nil {
			return nil, wrapError("configure", ep.display, s.secrets, err)
		}
	}
	if err := s.openStorage(); err != nil {
		return nil, wrapError("open storage for", ep.display, secrets, err)
	}
	return s, nil
}

func (s *Source) openStorage() error {
	raw, err := s.rawStorage()
	if err != nil {
		return err
	}
	if err := initRepository(raw, s.ep.url, s.opts.branch()); err != nil {
		return err
	}
	s.Repository, err = newRepository(raw, s.opts.Dir == "", s.ep.display)
	if err != nil {
		return err
	}
	switch raw := raw.(type) {
	case *memory.Storage:
		s.mem, s.locked = raw, s.store.(*lockedStorage)
	case *filesystem.Storage:
		s.disk, s.locked = raw, s.store.(*lockedPackStorage).lockedStorage
	}
	s.live = newLiveTrees()
	s.Repository.live = s.live
	if s.remote, err = s.git.Remote(remoteName); err != nil {
		return err
	}
	if ref, err := s.store.Reference(branchRef(s.opts.branch())); err == nil {
		s.revision = ref.Hash().String() // kept on disk from an earlier run
	}
	return nil
}

func (s *Source) rawStorage() (storage.Storer, error) {
	if s.opts.Dir == "" {
		return memory.NewStorage(), nil
	}
	s.diskCache = cache.NewObjectLRUDefault()
	return filesystem.NewStorage(osfs.New(s.opts.Dir), s.diskCache), nil
}

// initRepository makes raw a bare repository whose HEAD is the followed
// branch and whose origin is url, keeping what an earlier run stored.
func initRepository(raw storage.Storer, url, branch string) error {
	r, err := git.Open(raw, nil)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		r, err = git.Init(raw, nil)
	}
	if err != nil {
		return err
	}
	head := plumbing.NewSymbolicReference(plumbing.HEAD, branchRef(branch))
	if err := raw.SetReference(head); err != nil {
		return err
	}
	cfg, err := r.Config()
	if err != nil {
		return err
	}
	cfg.Remotes[remoteName] = &config.RemoteConfig{
		Name:  remoteName,
		URLs:  []string{url},
		Fetch: []config.RefSpec{config.RefSpec(fmt.Sprintf("+refs/heads/%s:refs/heads/%s", branch, branch))},
	}
	return raw.SetConfig(cfg)
}

func branchRef(branch string) plumbing.ReferenceName {
	return plumbing.NewBranchReferenceName(branch)
}

// Branch is the followed branch.
func (s *Source) Branch() string { return s.opts.branch() }

// URL is the repository location, redacted.
func (s *Source) URL() string { return s.ep.display }

// LocalPath is the path of a local (file:// or path) repository, or "".
func (s *Source) LocalPath() string { return s.ep.path }

// Revision is the last revision of the followed branch fetched
// successfully, or "" before the first Sync. It stays while the server is
// unreachable.
func (s *Source) Revision() string {
	s.revMu.RLock()
	defer s.revMu.RUnlock()
	return s.revision
}

func (s *Source) setRevision(rev string) {
	s.revMu.Lock()
	s.revision = rev
	s.revMu.Unlock()
}

func (s *Source) wrap(op string, err error) error {
	return wrapError(op, s.ep.display, s.secrets, err)
}
