package repo

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Compaction of a clone on disk (Dir)
//
// go-git's filesystem storage writes one pack per fetch (and a status
// commit one pack, see stage) and never removes any: before, a status
// commit of 1,000 changed records left 1,000 loose objects and 4 MiB of
// disk behind, for as long as the cache directory lives (the chart keeps
// it in an emptyDir, on the node's disk). compactDiskIfGrown keeps what
// compactIfGrown keeps in memory (the ref tips, the trees in use, the
// pinned commits, history cut behind them), written as one pack, once the
// store holds more than maxPacks packs, or more loose objects than the
// last compaction kept (and at least minCompactObjects: a cache directory
// an earlier release filled).
//
// The order is safe against a crash at any point: the new pack is
// complete before the shallow boundary moves, and both before anything is
// deleted; a crash in between leaves objects twice, never one missing.

// maxPacks is the most packs (one per fetch or status commit) a disk
// clone holds between compactions.
const maxPacks = 32

// packWindow is how many objects delta compression compares each with,
// as git's default.
const packWindow = 10

// compactDiskIfGrown compacts the disk store when it has grown; s.live.mu
// is held.
func (s *Source) compactDiskIfGrown() {
	defer s.locked.wlock()() // filesystem reads are exclusive anyway
	loose, packs, err := s.diskObjects()
	if err != nil {
		s.log.Warn("cannot list the clone's objects on disk", "dir", s.opts.Dir, "error", err)
		return
	}
	if len(packs) <= maxPacks && (len(loose) < minCompactObjects || len(loose) < s.live.kept) {
		return
	}
	roots := append(s.live.roots(), refTips(s.disk)...)
	kept, err := packReachable(s.disk, roots, loose, packs)
	if err != nil {
		s.log.Warn("cannot compact the clone on disk; it keeps every object (deleting the directory starts it afresh)", "dir", s.opts.Dir, "error", err)
		return
	}
	s.diskCache.Clear() // it may hold objects no longer stored
	s.live.kept = kept
	s.log.Debug("compacted the clone on disk", "url", s.ep.display, "loose", len(loose), "packs", len(packs), "kept", kept)
}

// diskObjects lists the loose objects and the packs of the disk store.
func (s *Source) diskObjects() (loose, packs []plumbing.Hash, err error) {
	err = s.disk.ForEachObjectHash(func(h plumbing.Hash) error {
		loose = append(loose, h)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	packs, err = s.disk.ObjectPacks()
	return loose, packs, err
}

// packReachable writes what is reachable from roots (as keepReachable
// keeps it) into one new pack, moves the shallow boundary, then deletes
// the given loose objects and packs, and returns how many objects it
// kept. disk is locked for writing.
func packReachable(disk *filesystem.Storage, roots, loose, packs []plumbing.Hash) (int, error) {
	k := reachable(disk, roots)
	if len(k.kept) == 0 {
		return 0, errors.New("no object is reachable from the references")
	}
	newPack, err := writePack(disk, slices.Collect(maps.Keys(k.kept)))
	if err != nil {
		disk.Reindex() // a pack that failed may have been indexed
		return 0, err
	}
	if err := disk.SetShallow(k.boundary()); err != nil {
		return 0, fmt.Errorf("record the shallow boundary: %w", err)
	}
	var errs []error
	for _, h := range packs {
		if h != newPack {
			errs = append(errs, disk.DeleteOldObjectPackAndIndex(h, time.Time{}))
		}
	}
	for _, h := range loose {
		errs = append(errs, disk.DeleteLooseObject(h))
	}
	disk.Reindex()
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("delete what the new pack holds: %w", err)
	}
	return len(k.kept), nil
}

// writePack writes objects into a new pack of disk and returns its name.
func writePack(disk *filesystem.Storage, objects []plumbing.Hash) (plumbing.Hash, error) {
	w, err := disk.PackfileWriter()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("open a new pack: %w", err)
	}
	h, err := packfile.NewEncoder(w, disk, false).Encode(objects, packWindow)
	if cerr := w.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write a new pack of %d objects: %w", len(objects), err)
	}
	return h, nil
}
