package diff

import (
	"bytes"
	"context"
	"io/fs"
	"reflect"
	"slices"

	"github.com/regatta-dev/regatta/spec"
)

// eventNote explains an event profile's pair in a plan.
const eventNote = "event profile: its objects are rendered per event from resources in the clusters, which regatta plan " +
	"does not read; its definition changes, so every instance in the cluster's status is re-rendered and re-applied " +
	"(see its objects with regatta render --event-resource)"

// eventPair handles the pair of an event profile (at either side), whose
// instances plan cannot render: nothing changes when the profile, its
// event source and its add-on files are the same on both sides; otherwise
// the pair is reported with eventNote and no objects. It reports whether
// the pair was an event profile's.
func (c *comparison) eventPair(ctx context.Context, p *pair) bool {
	bp, hp := c.base.Fleet.Profile(p.profile), c.head.Fleet.Profile(p.profile)
	if !isEventProfile(bp) && !isEventProfile(hp) {
		return false
	}
	if p.change == ProfileUpdated && sameEventDefinition(c.base, c.head, bp, hp) {
		return true
	}
	if c.replayable(p, bp, hp) {
		c.replayPair(ctx, p)
		return true
	}
	p.set = emptySet()
	p.result = &ProfileChange{Profile: p.profile, Change: p.change, Reasons: p.reasons,
		Notes: append(slices.Clone(p.notes), eventNote), Objects: p.set.objects}
	return true
}

func isEventProfile(p *spec.Profile) bool { return p != nil && p.IsEventProfile() }

func sameEventDefinition(base, head *side, bp, hp *spec.Profile) bool {
	if bp == nil || hp == nil || !reflect.DeepEqual(bp.Spec, hp.Spec) {
		return false
	}
	name := hp.Spec.EventTrigger.EventSourceName
	bs, hs := base.Fleet.EventSource(name), head.Fleet.EventSource(name)
	if bs == nil || hs == nil || !reflect.DeepEqual(bs.Spec, hs.Spec) {
		return false
	}
	for _, a := range hp.Spec.Addons {
		if !samePath(base, head, addonPath(a)) {
			return false
		}
	}
	return true
}

func addonPath(a spec.Addon) string {
	switch {
	case a.Manifests != nil:
		return a.Manifests.Path
	case a.Kustomize != nil:
		return a.Kustomize.Path
	case a.Helm != nil:
		return a.Helm.Path
	}
	return ""
}

// samePath compares a folder (or file) of the two sides: by Git hash when
// both sides have one, else file by file.
func samePath(base, head *side, path string) bool {
	if path == "" {
		return true
	}
	if base.TreeHash != nil && head.TreeHash != nil {
		b, errB := base.TreeHash(path)
		h, errH := head.TreeHash(path)
		return errB == nil && errH == nil && b == h
	}
	return sameFiles(base.Fleet.FS, head.Fleet.FS, path)
}

func sameFiles(a, b fs.FS, root string) bool {
	files := func(fsys fs.FS) map[string][]byte {
		out := map[string][]byte{}
		fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out[p], _ = fs.ReadFile(fsys, p)
			}
			return nil
		})
		return out
	}
	fa, fb := files(a), files(b)
	if len(fa) != len(fb) || len(fa) == 0 {
		return false
	}
	for p, x := range fa {
		if y, ok := fb[p]; !ok || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}
