// Package verify decides whether a revision of the fleet repository may
// come in force: its commits must carry signatures of keys the platform
// trusts (OpenPGP keys, and SSH keys listed in a git allowed_signers
// file), and, under a signers policy, each signer may change only the
// paths the policy gives it.
//
// It answers one question, "is revision R acceptable given the last
// verified revision L?", with a Verdict naming the commit, the key and
// the reason of a refusal (and the file, when a signer changed a path it
// may not). The keys and the policy come from outside the repository they
// protect (flags pointing at a mounted Secret).
//
//	keys, err := verify.LoadKeys("/etc/regatta/trusted-keys")
//	v := verify.New(src, verify.Options{Mode: verify.ModeEvery, Keys: keys, Policy: policy})
//	verdict := v.Check(ctx, head, lastVerified)
//	if !verdict.Accepted { ... keep head out; verdict.Error() says why }
//
// Modes: ModeHead checks the tip commit, and under a policy the whole
// change since L against the tip's signer; ModeEvery checks every commit
// reachable from R and not from L (first-parent and merged ones), each
// commit's own changes against its own signer. Without L (the first
// revision a daemon ever verifies) only R's signature is checked: it is
// the anchor.
//
// Expired and revoked OpenPGP keys are refused as `git verify-commit`
// refuses them (gpg judges expiry and revocation now); SSH keys are held
// to their valid-after/valid-before at the commit's committer time, as git
// does.
package verify
