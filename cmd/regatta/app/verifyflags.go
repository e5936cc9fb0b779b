package app

import (
	"github.com/spf13/pflag"

	"github.com/regatta-dev/regatta/verify"
)

// verifyFlags configure the signature check of revisions, shared by `run`
// (and so pull-mode agents) and `plan`. The keys and the policy come from
// files outside the repository (a mounted Secret).
type verifyFlags struct {
	mode       string
	keysDir    string
	policyFile string
}

func (v *verifyFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&v.mode, "verify-commits", "", `check commit signatures before a revision comes in force: "head" (the tip commit) or "every" (every commit since the last verified revision); empty: no check`)
	fl.StringVar(&v.keysDir, "trusted-keys", "", "folder of trusted keys (a mounted Secret): OpenPGP public keys as *.asc, *.gpg or *.pgp and SSH signers in allowed_signers (git's format)")
	fl.StringVar(&v.policyFile, "signers-policy", "", "SignersPolicy file saying which signers may change which paths (see docs/operations.md, Signed commits)")
}

// options reads the keys and the policy; nil when no check is asked for.
// exempt are folders whose changes need no signature (regatta's status/
// on the followed branch).
func (v *verifyFlags) options(exempt ...string) (*verify.Options, error) {
	if v.mode == "" {
		if v.keysDir != "" || v.policyFile != "" {
			return nil, usageError("--trusted-keys and --signers-policy need --verify-commits=head or every")
		}
		return nil, nil
	}
	mode, err := verify.ParseMode(v.mode)
	if err != nil {
		return nil, usageError("--verify-commits: %v", err)
	}
	if v.keysDir == "" {
		return nil, usageError("--verify-commits needs --trusted-keys")
	}
	keys, err := verify.LoadKeys(v.keysDir)
	if err != nil {
		return nil, usageError("--trusted-keys: %v", err)
	}
	opts := &verify.Options{Mode: mode, Keys: keys, Exempt: exempt}
	if v.policyFile != "" {
		if opts.Policy, err = verify.LoadPolicy(v.policyFile); err != nil {
			return nil, usageError("--signers-policy: %v", err)
		}
	}
	return opts, nil
}
