package reconciler

import (
	"context"
	"fmt"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/verify"
)

// verified reports whether sha may come in force. A refusal keeps sha out
// as an invalid revision is kept out: fleet names the commit, key and
// reason, the metric counts it, and the revision in force stays.
func (d *Daemon) verified(ctx context.Context, sha string, before *revision, fleet *status.Fleet) bool {
	v := d.opts.Verify
	if v == nil {
		return true
	}
	if before != nil && before.sha == sha {
		d.mu.Lock()
		fleet.Verification = d.inForceCheck
		d.mu.Unlock()
		return true
	}
	base, broken := d.verifiedBase(ctx, before)
	var verdict verify.Verdict
	if broken != nil {
		verdict = *broken
		verdict.Revision, verdict.Detail = sha, fmt.Sprintf("the revision in force before the restart, %s, fails the check, so nothing since it can be verified (trust its signer again to go on): %s",
			status.ShortRevision(broken.Revision), broken.Detail)
		// The clusters keep what it applied; status goes on naming it, so
		// that the next restart still has it to check the commits since.
		fleet.AppliedRevision = broken.Revision
	} else {
		verdict = v.Check(ctx, sha, base)
	}
	fleet.Verification = statusVerification(v.Mode(), verdict)
	if verdict.Accepted {
		d.r.log.Info("revision verified", "revision", sha, "key", verdict.Key, "signer", verdict.Signer, "commits", verdict.Commits)
		return true
	}
	d.r.opts.Metrics.RevisionsRefused.WithLabelValues(string(verdict.Reason)).Inc()
	fleet.Errors = append(fleet.Errors, status.Error{File: verdict.File, Message: "signature check: " + verdict.Error()})
	d.r.log.Error("revision refused by the signature check; the last verified revision stays in force",
		"revision", sha, "commit", verdict.Commit, "reason", verdict.Reason, "key", verdict.Key, "file", verdict.File, "detail", verdict.Detail)
	return false
}

// verifiedInForce remembers the signature check of the revision that
// came in force.
func (d *Daemon) verifiedInForce(good *revision, fleet *status.Fleet) {
	if d.opts.Verify != nil && good != nil && good.sha == fleet.SourceRevision {
		d.mu.Lock()
		d.inForceCheck = fleet.Verification
		d.mu.Unlock()
	}
}

// verifiedBase is the last verified revision: the one in force, or at
// start the one the status branch recorded in force ("" when there is
// none: the new revision is the anchor). When that recorded revision
// fails its own check now, it returns that verdict instead: nothing since
// it can be verified, so nothing comes in force (fail closed).
func (d *Daemon) verifiedBase(ctx context.Context, before *revision) (string, *verify.Verdict) {
	if before != nil {
		return before.sha, nil
	}
	d.mu.Lock()
	sha := d.inForce
	d.mu.Unlock()
	if sha != "" {
		d.anchorVerified(ctx, sha)
	}
	d.mu.Lock()
	a := d.anchor
	d.mu.Unlock()
	switch {
	case a == nil:
		return "", nil
	case a.Accepted:
		return a.Revision, nil
	}
	return "", a
}

// anchorVerified checks, once, the signature of the revision in force
// before a restart, so a restart keeps the verdicts: it stays the base
// only while its signer is still trusted.
func (d *Daemon) anchorVerified(ctx context.Context, sha string) bool {
	if d.opts.Verify == nil {
		return true
	}
	d.mu.Lock()
	a := d.anchor
	d.mu.Unlock()
	if a == nil || a.Revision != sha {
		verdict := d.opts.Verify.Check(ctx, sha, "")
		a = &verdict
		d.mu.Lock()
		d.anchor = a
		d.mu.Unlock()
		if !a.Accepted {
			d.r.log.Error("the revision in force before the restart fails the signature check", "revision", sha, "error", a.Error())
		}
	}
	return a.Accepted
}

func statusVerification(mode verify.Mode, v verify.Verdict) *status.Verification {
	return &status.Verification{Accepted: v.Accepted, Mode: string(mode), Base: v.Base, Commit: v.Commit,
		Key: v.Key, Signer: v.Signer, Reason: string(v.Reason), File: v.File, Message: v.Error()}
}
