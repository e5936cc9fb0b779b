package repo

import (
	"io"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
)

// lockedStorage makes a go-git storage safe to read from many goroutines
// while a fetch or commit writes to it. go-git storages are not
// goroutine-safe: the memory storage writes plain maps, and the filesystem
// storage shares open packfiles. Readers share the lock for memory storage;
// filesystem reads are exclusive and copy each object into memory, so no
// lazily-read object escapes the lock.
type lockedStorage struct {
	storage.Storer
	mu     sync.RWMutex
	shared bool // objects are immutable in-memory values
}

// newLockedStorage wraps s; the result implements storer.PackfileWriter
// exactly when s does, as go-git decides how to store a fetch by that.
func newLockedStorage(s storage.Storer, shared bool) storage.Storer {
	ls := &lockedStorage{Storer: s, shared: shared}
	if _, ok := s.(storer.PackfileWriter); ok {
		return &lockedPackStorage{ls}
	}
	return ls
}

// lockedPackStorage is a lockedStorage over a storage that writes packfiles.
type lockedPackStorage struct {
	*lockedStorage
}

func (s *lockedStorage) rlock() func() {
	if s.shared {
		s.mu.RLock()
		return s.mu.RUnlock
	}
	s.mu.Lock()
	return s.mu.Unlock
}

func (s *lockedStorage) wlock() func() {
	s.mu.Lock()
	return s.mu.Unlock
}

func (s *lockedStorage) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	defer s.wlock()()
	return s.Storer.SetEncodedObject(o)
}

func (s *lockedStorage) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	defer s.rlock()()
	o, err := s.Storer.EncodedObject(t, h)
	if err != nil || s.shared {
		return o, err
	}
	return materialize(o)
}

func (s *lockedStorage) HasEncodedObject(h plumbing.Hash) error {
	defer s.rlock()()
	return s.Storer.HasEncodedObject(h)
}

func (s *lockedStorage) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	defer s.rlock()()
	return s.Storer.EncodedObjectSize(h)
}

// IterEncodedObjects returns a snapshot taken under the lock.
func (s *lockedStorage) IterEncodedObjects(t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	defer s.rlock()()
	iter, err := s.Storer.IterEncodedObjects(t)
	if err != nil || s.shared {
		return iter, err
	}
	var objs []plumbing.EncodedObject
	err = iter.ForEach(func(o plumbing.EncodedObject) error {
		m, err := materialize(o)
		objs = append(objs, m)
		return err
	})
	return storer.NewEncodedObjectSliceIter(objs), err
}

// HashesWithPrefix keeps go-git's fast short-hash lookup.
func (s *lockedStorage) HashesWithPrefix(prefix []byte) ([]plumbing.Hash, error) {
	defer s.rlock()()
	if fi, ok := s.Storer.(interface {
		HashesWithPrefix([]byte) ([]plumbing.Hash, error)
	}); ok {
		return fi.HashesWithPrefix(prefix)
	}
	return hashesWithPrefix(s.Storer, prefix)
}

// PackfileWriter lets a fetch into disk storage write one packfile rather
// than one loose object per object; the new pack is published under the
// lock when the writer is closed.
func (s *lockedPackStorage) PackfileWriter() (io.WriteCloser, error) {
	pw := s.Storer.(storer.PackfileWriter)
	unlock := s.wlock()
	w, err := pw.PackfileWriter()
	unlock()
	if err != nil {
		return nil, err
	}
	return &lockedWriteCloser{WriteCloser: w, s: s.lockedStorage}, nil
}

type lockedWriteCloser struct {
	io.WriteCloser
	s *lockedStorage
}

func (w *lockedWriteCloser) Close() error {
	defer w.s.wlock()()
	return w.WriteCloser.Close()
}

func hashesWithPrefix(st storer.EncodedObjectStorer, prefix []byte) ([]plumbing.Hash, error) {
	iter, err := st.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return nil, err
	}
	var hashes []plumbing.Hash
	err = iter.ForEach(func(o plumbing.EncodedObject) error {
		if h := o.Hash(); len(prefix) <= len(h) && string(h[:len(prefix)]) == string(prefix) {
			hashes = append(hashes, h)
		}
		return nil
	})
	return hashes, err
}

// materialize copies an object into memory.
func materialize(o plumbing.EncodedObject) (plumbing.EncodedObject, error) {
	if m, ok := o.(*plumbing.MemoryObject); ok {
		return m, nil
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	m := &plumbing.MemoryObject{}
	m.SetType(o.Type())
	if _, err := io.Copy(m, r); err != nil {
		return nil, err
	}
	return m, nil
}
