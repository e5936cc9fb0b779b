package repo

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// stage holds the objects a commit writes in memory, over the store it
// reads the rest from, until keep stores them all at once: on disk as one
// pack instead of a loose object (a file) each, which for a status commit
// of 1,000 changed records is 1,000 files and most of its time.
type stage struct {
	storer.EncodedObjectStorer // the Source's store, read through
	objs                       map[plumbing.Hash]plumbing.EncodedObject
	order                      []plumbing.Hash
}

func newStage(base storer.EncodedObjectStorer) *stage {
	return &stage{EncodedObjectStorer: base, objs: map[plumbing.Hash]plumbing.EncodedObject{}}
}

func (st *stage) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (st *stage) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	h := o.Hash()
	if _, ok := st.objs[h]; !ok {
		st.objs[h] = o
		st.order = append(st.order, h)
	}
	return h, nil
}

func (st *stage) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, ok := st.objs[h]; ok {
		if t != plumbing.AnyObject && o.Type() != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return o, nil
	}
	return st.EncodedObjectStorer.EncodedObject(t, h)
}

func (st *stage) HasEncodedObject(h plumbing.Hash) error {
	if _, ok := st.objs[h]; ok {
		return nil
	}
	return st.EncodedObjectStorer.HasEncodedObject(h)
}

func (st *stage) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if o, ok := st.objs[h]; ok {
		return o.Size(), nil
	}
	return st.EncodedObjectStorer.EncodedObjectSize(h)
}

// minStagedPack is the fewest objects keep writes as a pack; fewer are
// stored one by one.
const minStagedPack = 16

// keep stores the staged objects in to: as one pack (undeltified: the
// next compaction deltifies) when to writes packs and there are at least
// minStagedPack of them, else one by one.
func (st *stage) keep(to storer.EncodedObjectStorer) error {
	pw, ok := to.(storer.PackfileWriter)
	if !ok || len(st.order) < minStagedPack {
		for _, h := range st.order {
			if _, err := to.SetEncodedObject(st.objs[h]); err != nil {
				return err
			}
		}
		return nil
	}
	w, err := pw.PackfileWriter()
	if err != nil {
		return fmt.Errorf("open a pack: %w", err)
	}
	_, err = packfile.NewEncoder(w, st, false).Encode(st.order, 0)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write a pack of %d objects: %w", len(st.order), err)
	}
	return nil
}
