package timeline

import (
	"container/list"
	"context"
	"fmt"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	yaml "go.yaml.in/yaml/v3"
	"golang.org/x/sync/errgroup"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/ui"
)

// built is a frame with the file name of each record, in the same order
// as its Snapshot.Clusters (by name): what the next commit's changes
// are applied to.
type built struct {
	frame ui.Frame
	keys  []string
}

// frame returns the frame of the commit at position i of c: cached, or
// made from the cached frame nearest on the branch and the files that
// differ between the two commits (a tree diff, whichever way), or read
// whole when none is cached.
func (r *Reader) frame(ctx context.Context, c *chain, i int) (ui.Frame, error) {
	return r.frameKept(ctx, c, i, false)
}

// frameKept is frame; passing (a walk back through the history) keeps a
// frame it makes as the first to forget, so that a walk longer than the
// cache does not push out the frames the pages use (the head's).
func (r *Reader) frameKept(ctx context.Context, c *chain, i int, passing bool) (ui.Frame, error) {
	cm := c.commits[i]
	if b, ok := r.frames.get(cm.SHA); ok {
		return b.frame, nil
	}
	base, from := r.frames.nearest(c, i), ""
	if base == nil {
		base = &built{}
	} else {
		from = base.frame.Commit
	}
	changes, err := c.repo.ChangedFiles(ctx, from, cm.SHA, status.Dir)
	if err != nil {
		return ui.Frame{}, err
	}
	b, err := apply(ctx, c.repo, base, cm, changes)
	if err != nil {
		return ui.Frame{}, err
	}
	if passing {
		r.frames.addLast(cm.SHA, b)
	} else {
		r.frames.add(cm.SHA, b)
	}
	return b.frame, nil
}

// apply makes the frame of commit cm from base, the frame of another
// commit, and the files that differ between the two: records decoded,
// removed or added, the fleet file read again when it differs.
func apply(ctx context.Context, g *repo.Repository, base *built, cm repo.Commit, changes []repo.FileChange) (*built, error) {
	next := &built{frame: ui.Frame{Commit: cm.SHA, Time: cm.Time, Snapshot: status.Snapshot{Fleet: base.frame.Snapshot.Fleet}}}
	records := map[string]*status.ClusterStatus{} // file name -> new record, nil when removed
	var decoded []repo.FileChange                 // the records to decode
	for _, ch := range changes {
		key, isRecord := recordKey(ch.Path)
		switch {
		case ch.Path == status.FleetFile:
			next.frame.Snapshot.Fleet = status.Fleet{}
			if ch.New != "" {
				if err := decode(ctx, g, cm, ch, &next.frame.Snapshot.Fleet); err != nil {
					return nil, err
				}
			}
		case isRecord && ch.New == "":
			records[key] = nil
		case isRecord:
			decoded = append(decoded, ch)
		}
	}
	recs, err := decodeRecords(ctx, g, cm, decoded)
	if err != nil {
		return nil, err
	}
	for i, ch := range decoded {
		key, _ := recordKey(ch.Path)
		records[key] = &recs[i]
	}
	next.keys, next.frame.Snapshot.Clusters = merged(base, records)
	return next, nil
}

// parallelFrom is how many records a frame decodes before it uses every
// core: a head frame of 2,000 records decodes them all.
const parallelFrom = 64

// decodeRecords decodes the records of changes, on every core when there
// are many.
func decodeRecords(ctx context.Context, g *repo.Repository, cm repo.Commit, changes []repo.FileChange) ([]status.ClusterStatus, error) {
	recs := make([]status.ClusterStatus, len(changes))
	workers := 1
	if len(changes) >= parallelFrom {
		workers = runtime.GOMAXPROCS(0)
	}
	eg, ctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range workers {
		eg.Go(func() error {
			for i := int(next.Add(1) - 1); i < len(changes); i = int(next.Add(1) - 1) {
				if err := decode(ctx, g, cm, changes[i], &recs[i]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return recs, eg.Wait()
}

// merged is base's records with records' applied, sorted by file name.
func merged(base *built, records map[string]*status.ClusterStatus) ([]string, []status.ClusterStatus) {
	old := base.frame.Snapshot.Clusters
	keys := make([]string, 0, len(old)+len(records))
	out := make([]status.ClusterStatus, 0, len(old)+len(records))
	for i, k := range base.keys {
		rec, changed := records[k]
		if !changed {
			keys, out = append(keys, k), append(out, old[i])
			continue
		}
		delete(records, k)
		if rec != nil {
			keys, out = append(keys, k), append(out, *rec)
		}
	}
	added := false
	for k, rec := range records {
		if rec != nil {
			keys, out, added = append(keys, k), append(out, *rec), true
		}
	}
	if added {
		sort.Sort(byKey{keys, out})
	}
	return keys, out
}

type byKey struct {
	keys    []string
	records []status.ClusterStatus
}

func (b byKey) Len() int           { return len(b.keys) }
func (b byKey) Less(i, j int) bool { return b.keys[i] < b.keys[j] }
func (b byKey) Swap(i, j int) {
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
	b.records[i], b.records[j] = b.records[j], b.records[i]
}

// recordKey is the cluster name of a record's path
// (status/clusters/<name>.yaml).
func recordKey(p string) (string, bool) {
	dir, file := path.Split(p)
	if dir != status.ClustersDir+"/" || !strings.HasSuffix(file, ".yaml") {
		return "", false
	}
	return strings.TrimSuffix(file, ".yaml"), true
}

// decode reads a changed file of cm into v; errors name the commit and
// the file.
func decode(ctx context.Context, g *repo.Repository, cm repo.Commit, ch repo.FileChange, v any) error {
	b, err := g.Blob(ctx, ch.New)
	if err == nil {
		err = yaml.Unmarshal(b, v)
	}
	if err != nil {
		return fmt.Errorf("status commit %s: %s: %w", short(cm.SHA), ch.Path, err)
	}
	return nil
}

// frameCache keeps the frames used last, up to max.
type frameCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *cacheItem, most recent first
	items map[string]*list.Element
}

type cacheItem struct {
	commit string
	b      *built
}

func newFrameCache(max int) *frameCache {
	return &frameCache{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (f *frameCache) get(commit string) (*built, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.items[commit]
	if !ok {
		return nil, false
	}
	f.order.MoveToFront(e)
	return e.Value.(*cacheItem).b, true
}

// nearest is the cached frame of the commit of c nearest to position i,
// or nil.
func (f *frameCache) nearest(c *chain, i int) *built {
	f.mu.Lock()
	defer f.mu.Unlock()
	var best *built
	dist := len(c.commits)
	for commit, e := range f.items {
		if j, ok := c.index[commit]; ok && abs(j-i) < dist {
			best, dist = e.Value.(*cacheItem).b, abs(j-i)
		}
	}
	return best
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func (f *frameCache) add(commit string, b *built) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.items[commit]; ok {
		f.order.MoveToFront(e)
		return
	}
	f.items[commit] = f.order.PushFront(&cacheItem{commit: commit, b: b})
	for f.order.Len() > f.max {
		last := f.order.Back()
		f.order.Remove(last)
		delete(f.items, last.Value.(*cacheItem).commit)
	}
}

// addLast adds a frame as the first to forget, forgetting the one that
// was so when the cache is full.
func (f *frameCache) addLast(commit string, b *built) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.items[commit]; ok {
		return
	}
	if f.order.Len() >= f.max {
		last := f.order.Back()
		f.order.Remove(last)
		delete(f.items, last.Value.(*cacheItem).commit)
	}
	f.items[commit] = f.order.PushBack(&cacheItem{commit: commit, b: b})
}
