package app

import (
	"context"

	"github.com/regatta-dev/regatta/reconciler/diff"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/verify"
)

// checkSignature says in the plan whether the daemon, having verified
// base, would let head in, and by which key; a refusal is an error of the
// plan (exit 1), so a reviewer sees it before merging.
func checkSignature(ctx context.Context, dir string, opts verify.Options, base, head revision, rep *diff.Report) error {
	r, err := repo.Open(dir)
	if err != nil {
		return err
	}
	v := verify.New(r, opts).Check(ctx, head.tree.Revision(), base.tree.Revision())
	rep.Signature = &diff.Signature{Mode: string(opts.Mode), Accepted: v.Accepted, Commit: v.Commit,
		Key: v.Key, Signer: v.Signer, Reason: string(v.Reason), File: v.File, Message: v.Error()}
	if !v.Accepted {
		rep.Errors = append(rep.Errors, diff.Problem{Text: "signature check: " + v.Error(), File: v.File})
	}
	return nil
}
