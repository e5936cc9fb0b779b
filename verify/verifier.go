package verify

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// Mode says which commits must be signed.
type Mode string

const (
	// ModeHead checks the revision's tip commit (Flux's HEAD).
	ModeHead Mode = "head"
	// ModeEvery checks every commit since the last verified revision.
	ModeEvery Mode = "every"
)

// ParseMode reads a mode named on the command line.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeHead, ModeEvery:
		return m, nil
	}
	return "", fmt.Errorf("verify mode %q: want %s or %s (regatta follows a branch, so there is no tag mode)", s, ModeHead, ModeEvery)
}

// Options configures a Verifier.
type Options struct {
	Mode Mode
	Keys *Keys
	// Policy, when set, limits the paths each signer may change.
	Policy *Policy
	// Exempt are folders (status/, when regatta commits its status to
	// the followed branch) whose changes need no signature: a commit
	// changing nothing else is not checked, and a policy does not apply
	// to them.
	Exempt []string
	// Now is the time OpenPGP expiry and revocation are judged at
	// (default time.Now).
	Now func() time.Time
}

// Verifier answers whether a revision may come in force.
type Verifier struct {
	repo Commits
	opts Options
	now  func() time.Time
}

// New returns a Verifier reading commits from repo.
func New(repo Commits, opts Options) *Verifier {
	if opts.Mode == "" {
		opts.Mode = ModeHead
	}
	if opts.Keys == nil {
		opts.Keys = &Keys{}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Verifier{repo: repo, opts: opts, now: now}
}

// Mode is the configured mode.
func (v *Verifier) Mode() Mode { return v.opts.Mode }

// Check says whether rev is acceptable given base, the last verified
// revision ("" when there is none: rev's signature alone is checked). With
// Exempt folders, a commit that changes nothing else needs no signature. A
// commit that cannot be read refuses rev (ReasonUnverifiable): nothing
// unverified comes in force.
func (v *Verifier) Check(ctx context.Context, rev, base string) Verdict {
	out := Verdict{Revision: rev, Base: base, Commit: rev}
	if base == rev {
		base = ""
	}
	commits, err := v.toCheck(ctx, rev, base)
	if err != nil {
		return unverifiable(out, rev, err)
	}
	for _, c := range commits {
		files, err := v.ownChangesIfNeeded(ctx, c, base)
		if err != nil {
			return unverifiable(out, c.Hash.String(), err)
		}
		if len(v.opts.Exempt) > 0 && c.NumParents() == 1 && len(files) == 0 {
			continue // changes nothing but exempt folders
		}
		out.Commits++
		s, r := v.checkCommit(c)
		if r == nil {
			r = v.checkPaths(ctx, c, s, files, base)
		}
		if r != nil {
			return refused(out, c.Hash.String(), r)
		}
		if out.Key == "" {
			out.Key, out.Signer = s.key, s.name
		}
	}
	out.Accepted = true
	return out
}

// toCheck returns the commits to check, newest first: in ModeHead the
// tip, or with Exempt folders the newest commit of rev's first-parent line
// that changes more than them (none when there is none since base); in
// ModeEvery every commit since base.
func (v *Verifier) toCheck(ctx context.Context, rev, base string) ([]*object.Commit, error) {
	if v.opts.Mode == ModeEvery && base != "" {
		return since(ctx, v.repo, rev, base)
	}
	c, err := v.repo.CommitObject(ctx, rev)
	for err == nil && len(v.opts.Exempt) > 0 && c.NumParents() == 1 && c.Hash.String() != base {
		files, ferr := v.ownChanges(ctx, c)
		if ferr != nil || len(files) > 0 {
			return []*object.Commit{c}, ferr
		}
		c, err = v.repo.CommitObject(ctx, c.ParentHashes[0].String())
	}
	if err != nil {
		return nil, err
	}
	if c.Hash.String() == base {
		return nil, nil
	}
	return []*object.Commit{c}, nil
}

func (v *Verifier) checkCommit(c *object.Commit) (signer, *refusal) {
	payload, err := commitPayload(c)
	if err != nil {
		return signer{}, &refusal{reason: ReasonUnverifiable, detail: err.Error()}
	}
	return v.checkSignature(c.PGPSignature, payload, c.Committer.When)
}

// checkPaths holds the signer of c to the policy for the paths c changed:
// in ModeEvery c's own changes, in ModeHead everything since base.
func (v *Verifier) checkPaths(ctx context.Context, c *object.Commit, s signer, own []string, base string) *refusal {
	if v.opts.Policy == nil || base == "" {
		return nil
	}
	files := own
	if v.opts.Mode == ModeHead {
		var err error
		if files, err = v.changesSince(ctx, base, c); err != nil {
			return &refusal{reason: ReasonUnverifiable, key: s.key, name: s.name, detail: err.Error()}
		}
	}
	for _, f := range files {
		if ok, why := v.opts.Policy.allows(s, f); !ok {
			return &refusal{reason: ReasonSignerNotAllowed, key: s.key, name: s.name, detail: f + ": " + why}
		}
	}
	return nil
}

func refused(v Verdict, commit string, r *refusal) Verdict {
	v.Commit, v.Reason, v.Key, v.Signer, v.Detail = commit, r.reason, r.key, r.name, r.detail
	if r.reason == ReasonSignerNotAllowed {
		v.File, v.Detail = splitFile(r.detail)
	}
	return v
}

func unverifiable(v Verdict, commit string, err error) Verdict {
	return refused(v, commit, &refusal{reason: ReasonUnverifiable, detail: err.Error()})
}

// splitFile separates "file: why".
func splitFile(s string) (string, string) {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == ':' && s[i+1] == ' ' {
			return s[:i], s[i+2:]
		}
	}
	return s, ""
}

// ownChanges are the paths a commit changed: against its parent, or for
// a merge the paths that differ from every parent (its own resolution;
// the merged commits are checked on their own).
func (v *Verifier) ownChanges(ctx context.Context, c *object.Commit) ([]string, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	var files []string
	if c.NumParents() == 0 {
		files, err = diffPaths(nil, tree)
	} else {
		files, err = v.mergePaths(ctx, c, tree)
	}
	return v.notExempt(files), err
}

// ownChangesIfNeeded is ownChanges when something needs them: exempt
// folders, or a policy in ModeEvery; nil otherwise.
func (v *Verifier) ownChangesIfNeeded(ctx context.Context, c *object.Commit, base string) ([]string, error) {
	if len(v.opts.Exempt) == 0 && (v.opts.Policy == nil || v.opts.Mode != ModeEvery || base == "") {
		return nil, nil
	}
	return v.ownChanges(ctx, c)
}

// notExempt drops the paths under Exempt.
func (v *Verifier) notExempt(files []string) []string {
	if len(v.opts.Exempt) == 0 {
		return files
	}
	out := files[:0]
	for _, f := range files {
		if !underAny(f, v.opts.Exempt) {
			out = append(out, f)
		}
	}
	return out
}

func underAny(f string, dirs []string) bool {
	for _, d := range dirs {
		if f == d || strings.HasPrefix(f, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// mergePaths are the paths that differ from every parent; parents are
// read through the repository, which fetches what a shallow clone lacks.
func (v *Verifier) mergePaths(ctx context.Context, c *object.Commit, tree *object.Tree) ([]string, error) {
	count := map[string]int{}
	for _, h := range c.ParentHashes {
		p, err := v.repo.CommitObject(ctx, h.String())
		if err != nil {
			return nil, err
		}
		pt, err := p.Tree()
		if err != nil {
			return nil, err
		}
		files, err := diffPaths(pt, tree)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			count[f]++
		}
	}
	var out []string
	for f, k := range count {
		if k == len(c.ParentHashes) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}

// changesSince are the paths that differ between base and tip.
func (v *Verifier) changesSince(ctx context.Context, base string, tip *object.Commit) ([]string, error) {
	b, err := v.repo.CommitObject(ctx, base)
	if err != nil {
		return nil, err
	}
	bt, err := b.Tree()
	if err != nil {
		return nil, err
	}
	tt, err := tip.Tree()
	if err != nil {
		return nil, err
	}
	files, err := diffPaths(bt, tt)
	return v.notExempt(files), err
}

// diffPaths lists the paths added, removed or changed (both names of a
// rename).
func diffPaths(a, b *object.Tree) ([]string, error) {
	changes, err := object.DiffTree(a, b)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, ch := range changes {
		for _, name := range []string{ch.From.Name, ch.To.Name} {
			if name != "" && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
