package repo

import (
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Reference, shallow and config access under the same lock as objects:
// Resolve may read references while a fetch updates them.

func (s *lockedStorage) SetReference(r *plumbing.Reference) error {
	defer s.wlock()()
	return s.Storer.SetReference(r)
}

func (s *lockedStorage) CheckAndSetReference(n, old *plumbing.Reference) error {
	defer s.wlock()()
	return s.Storer.CheckAndSetReference(n, old)
}

func (s *lockedStorage) Reference(n plumbing.ReferenceName) (*plumbing.Reference, error) {
	defer s.rlock()()
	return s.Storer.Reference(n)
}

func (s *lockedStorage) IterReferences() (storer.ReferenceIter, error) {
	defer s.rlock()()
	iter, err := s.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	var refs []*plumbing.Reference
	err = iter.ForEach(func(r *plumbing.Reference) error {
		refs = append(refs, r)
		return nil
	})
	return storer.NewReferenceSliceIter(refs), err
}

func (s *lockedStorage) RemoveReference(n plumbing.ReferenceName) error {
	defer s.wlock()()
	return s.Storer.RemoveReference(n)
}

func (s *lockedStorage) CountLooseRefs() (int, error) {
	defer s.rlock()()
	return s.Storer.CountLooseRefs()
}

func (s *lockedStorage) PackRefs() error {
	defer s.wlock()()
	return s.Storer.PackRefs()
}

func (s *lockedStorage) SetShallow(commits []plumbing.Hash) error {
	defer s.wlock()()
	return s.Storer.SetShallow(commits)
}

func (s *lockedStorage) Shallow() ([]plumbing.Hash, error) {
	defer s.rlock()()
	return s.Storer.Shallow()
}

func (s *lockedStorage) SetConfig(c *config.Config) error {
	defer s.wlock()()
	return s.Storer.SetConfig(c)
}

func (s *lockedStorage) Config() (*config.Config, error) {
	defer s.rlock()()
	return s.Storer.Config()
}
