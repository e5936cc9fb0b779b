package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// Cache keys
//
// An add-on's output depends on (1) its memo key: its spec, its selected
// overlay, the RESULTS of its templated fields (paths, values) and, for
// Helm, the cluster's capabilities; (2) the repository content it read;
// (3) the template data its content templates (template: true files,
// values files) read, path by path (readsOf); (4) the decryption keys and
// the cluster's allowed keys (spec.decryption), only if a SOPS file was read; (5) for
// a remote chart, the chart's digest. A render records (2)-(4) as a memo
// entry under the memo key plus the values of its reads; the memo key's
// variants list which sets of reads renders of it made. The next request
// for the same memo key tries each variant: it looks up the entry under
// its own values of those reads, and hashes the recorded paths at its own
// revision (Git tree hashes when Request.TreeHash is set) into its key. So
// 1,000 clusters whose paths come out as 3 overlay folders have 3 keys,
// and a template that reads only .Cluster.Labels.env is rendered once per
// environment.
//
// This is sound because a render is deterministic in its inputs: two
// requests with the same memo key whose data agree on everything a render
// of one read (every template it ran reads only those paths, whatever the
// branch) run the same templates with the same results, read the same
// paths and produce the same output, as long as those paths hold the same
// content. Failures are deterministic too and are cached the same way,
// keyed by the add-ons up to the failing one (except failures of Helm
// add-ons, which may be network failures, and cancelled renders).

// RemoteTTL is how long a render that loaded remote kustomize bases or
// files (Options.AllowRemoteBases) is reused: their content is not part of
// the key, so the key includes the current RemoteTTL period instead.
const RemoteTTL = time.Minute

// maxVariants bounds the read sets remembered per memo key.
const maxVariants = 8

// memoEntry is what one render of an add-on used.
type memoEntry struct {
	// reads are the template data its content templates read, sorted.
	reads    []dataRead
	usedKeys bool
	// remote: the render loaded remote bases or files, whose content is
	// not in the key; such a key changes every RemoteTTL.
	remote bool
	deps   []string
}

// variant names the entry's reads and key use.
func (e memoEntry) variant() string {
	var b strings.Builder
	for _, r := range e.reads {
		b.WriteString(r.String())
		b.WriteByte('\x1e')
	}
	if e.usedKeys {
		b.WriteString("keys")
	}
	return b.String()
}

func (e memoEntry) cost() int64 {
	n := int64(64)
	for _, d := range e.deps {
		n += int64(len(d)) + 16
	}
	for _, r := range e.reads {
		n += int64(len(r.String())) + 32
	}
	return n
}

// inputKey computes the request's cache key from the memo entries of
// earlier renders. known is false when an add-on has no entry yet. A
// cached failure for the add-ons so far is returned as *cachedFailure,
// with known true.
func (r *Renderer) inputKey(ctx context.Context, p *plan) (key string, known bool, err error) {
	keys := make([]string, len(p.addons))
	for i := range p.addons {
		ap := &p.addons[i]
		e, ok := r.memoFor(p, ap)
		if !ok {
			return "", false, nil
		}
		if keys[i], err = r.addonKey(ctx, p, ap, e); err != nil {
			return "", false, err
		}
		if failed, ok := r.cache.failures.get(failureKey(p, keys[:i+1])); ok {
			return "", true, &cachedFailure{err: failed}
		}
	}
	return resultKey(p, keys), true, nil
}

// failureKey is the key of a render that failed in its last add-on.
func failureKey(p *plan, addonKeys []string) string {
	return hashStrings("failure", resultKey(p, addonKeys))
}

// memoFor finds the memo entry that applies to this request: one of the
// memo key's variants stored under this request's values of its reads.
func (r *Renderer) memoFor(p *plan, ap *addonPlan) (memoEntry, bool) {
	vs, ok := r.cache.variants.get(ap.memoKey)
	if !ok {
		return memoEntry{}, false
	}
	for _, v := range vs {
		e, ok := r.cache.memo.get(entryKey(p, ap, v))
		if ok && e.variant() == v.variant() {
			return e, true
		}
	}
	return memoEntry{}, false
}

// entryKey is where the memo entry of variant v sits for this request.
func entryKey(p *plan, ap *addonPlan, v memoEntry) string {
	return hashStrings(ap.memoKey, p.factsKey(v.reads, v.usedKeys))
}

// remember stores what a render of ap used, and its variant.
func (r *Renderer) remember(p *plan, ap *addonPlan, e memoEntry) {
	r.cache.memo.put(entryKey(p, ap, e), e, e.cost())
	r.cache.addVariant(ap.memoKey, memoEntry{reads: e.reads, usedKeys: e.usedKeys})
}

// addonKey hashes an add-on's inputs: memo key, used facts and the content
// of the recorded paths. For a known revision the content part is looked
// up rather than re-hashed: a revision names one tree.
func (r *Renderer) addonKey(ctx context.Context, p *plan, ap *addonPlan, e memoEntry) (string, error) {
	facts := p.factsKey(e.reads, e.usedKeys)
	if e.usedKeys {
		facts += "keyring=" + r.keyringHash
	}
	if e.remote {
		facts += "remote@" + strconv.FormatInt(time.Now().UnixNano()/int64(RemoteTTL), 10)
	}
	revKey := ""
	if p.req.Revision != "" {
		revKey = hashStrings(p.req.Revision, ap.memoKey, facts, hashStrings(e.deps...))
		if k, ok := r.cache.revKeys.get(revKey); ok {
			return r.withRemote(ctx, p, ap, k)
		}
	}
	parts := make([]string, 0, 2+2*len(e.deps))
	parts = append(parts, ap.memoKey, facts)
	for _, d := range e.deps {
		ph, err := hashPath(p.req, d)
		if err != nil {
			return "", err
		}
		parts = append(parts, d, ph)
	}
	k := hashStrings(parts...)
	if revKey != "" {
		r.cache.revKeys.put(revKey, k, int64(len(revKey)+len(k)+64))
	}
	return r.withRemote(ctx, p, ap, k)
}

func resultKey(p *plan, addonKeys []string) string {
	return hashStrings(append([]string{"result/v1", p.req.Profile.Metadata.Name}, addonKeys...)...)
}

// hashPath returns the tree hash of a repository path, or a hash of its
// content, or "absent".
func hashPath(req Request, p string) (string, error) {
	if req.TreeHash != nil {
		if h, err := req.TreeHash(p); err == nil {
			return "tree:" + h, nil
		}
	}
	h := sha256.New()
	if err := hashContent(h, req.FS, p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "absent", nil
		}
		return "", fmt.Errorf("hashing %s: %w", p, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// hashContent hashes a file, a symlink's target text, or a folder's
// entries recursively, without following symlinks.
func hashContent(h hash.Hash, fsys fs.FS, p string) error {
	info, err := lstat(fsys, p)
	if err != nil {
		return err
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := fsys.(fs.ReadLinkFS).ReadLink(p)
		fmt.Fprintf(h, "link %s\n", target)
		return err
	case info.IsDir():
		entries, err := fs.ReadDir(fsys, p)
		if err != nil {
			return err
		}
		for _, e := range entries {
			fmt.Fprintf(h, "entry %s\n", e.Name())
			if err := hashContent(h, fsys, path.Join(p, e.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	f, err := fsys.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(h, "file %d\n", info.Size())
	_, err = io.Copy(h, f)
	return err
}

func lstat(fsys fs.FS, p string) (fs.FileInfo, error) {
	if rl, ok := fsys.(fs.ReadLinkFS); ok {
		return rl.Lstat(p)
	}
	return fs.Stat(fsys, p)
}

func hashStrings(parts ...string) string {
	h := sha256.New()
	var n [20]byte
	for _, s := range parts {
		h.Write(strconv.AppendInt(n[:0], int64(len(s)), 10))
		h.Write([]byte{':'})
		io.WriteString(h, s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// hashJSON hashes a value's JSON form (map keys sorted).
func hashJSON(v any) string {
	js, err := json.Marshal(v)
	if err != nil {
		js = fmt.Appendf(nil, "%#v", v)
	}
	sum := sha256.Sum256(js)
	return hex.EncodeToString(sum[:])
}

// keyringHash fingerprints a keyring by its configuration.
func keyringHash(opts Options) string {
	if opts.LeaveEncrypted {
		return "leave-encrypted"
	}
	if opts.Keys == nil {
		return "none"
	}
	return hashStrings(opts.Keys.Fingerprint())
}
