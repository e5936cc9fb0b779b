package verify

import (
	"fmt"
	"strings"
)

// Reason is why a revision is refused.
type Reason string

// The reasons of a refusal.
const (
	// ReasonUnsigned: a commit carries no signature.
	ReasonUnsigned Reason = "Unsigned"
	// ReasonUnknownKey: no trusted key made the signature.
	ReasonUnknownKey Reason = "UnknownKey"
	// ReasonExpiredKey: the OpenPGP key (or its signature) expired, or
	// the SSH key was outside its valid-after/valid-before at the commit.
	ReasonExpiredKey Reason = "ExpiredKey"
	// ReasonRevokedKey: the OpenPGP key was revoked.
	ReasonRevokedKey Reason = "RevokedKey"
	// ReasonBadSignature: the signature does not match the commit (its
	// content was changed after signing) or cannot be read.
	ReasonBadSignature Reason = "BadSignature"
	// ReasonSignerNotAllowed: the signer changed a path the signers
	// policy does not give it.
	ReasonSignerNotAllowed Reason = "SignerNotAllowed"
	// ReasonUnverifiable: the commits could not be read.
	ReasonUnverifiable Reason = "Unverifiable"
)

// Reasons lists every reason, for metrics.
var Reasons = []Reason{ReasonUnsigned, ReasonUnknownKey, ReasonExpiredKey, ReasonRevokedKey,
	ReasonBadSignature, ReasonSignerNotAllowed, ReasonUnverifiable}

// Verdict is the answer for one revision.
type Verdict struct {
	// Revision is the revision asked about; Base the last verified one
	// it was checked against ("" for an anchor).
	Revision string
	Base     string
	Accepted bool
	// Commit is the refused commit, or Revision when accepted.
	Commit string
	// Key is the signing key of Commit: an OpenPGP fingerprint or an SSH
	// key's SHA256 fingerprint ("" when unsigned). Signer names it: the
	// OpenPGP user ID or the allowed_signers principals.
	Key    string
	Signer string
	Reason Reason
	// File is the path the signer may not change (ReasonSignerNotAllowed).
	File string
	// Detail says more, for people.
	Detail string
	// Commits is how many commits were checked.
	Commits int
}

// Error says why the revision is refused ("" when accepted).
func (v Verdict) Error() string {
	if v.Accepted {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "commit %s refused: %s", short(v.Commit), v.Reason)
	if v.File != "" {
		fmt.Fprintf(&b, " at %s", v.File)
	}
	if v.Key != "" {
		fmt.Fprintf(&b, " (key %s", v.Key)
		if v.Signer != "" {
			fmt.Fprintf(&b, ", %s", v.Signer)
		}
		b.WriteString(")")
	}
	if v.Detail != "" {
		fmt.Fprintf(&b, ": %s", v.Detail)
	}
	return b.String()
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
