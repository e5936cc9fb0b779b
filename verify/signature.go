package verify

import (
	"io"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// signer is who made a good signature.
type signer struct {
	// key is the OpenPGP fingerprint or SSH key fingerprint.
	key string
	// name is what people call the signer: a user ID, principals.
	name string
	// ids are what a signers policy may name: the key, and the e-mail
	// addresses of an OpenPGP key or the principals of an SSH key.
	ids []string
}

// refusal is why a signature is not good, and whose key it names.
type refusal struct {
	reason Reason
	key    string
	name   string
	detail string
}

const (
	pgpArmor = "-----BEGIN PGP SIGNATURE-----"
	sshArmor = "-----BEGIN SSH SIGNATURE-----"
	// sshNamespace is the namespace git signs commits and tags in.
	sshNamespace = "git"
)

// checkSignature checks a signature over payload, made at t (the commit
// or tag time, for SSH validity windows).
func (v *Verifier) checkSignature(sig string, payload []byte, t time.Time) (signer, *refusal) {
	switch {
	case strings.TrimSpace(sig) == "":
		return signer{}, &refusal{reason: ReasonUnsigned}
	case strings.Contains(sig, pgpArmor):
		return v.checkPGP(sig, payload)
	case strings.Contains(sig, sshArmor):
		return v.checkSSH(sig, payload, t)
	}
	return signer{}, &refusal{reason: ReasonBadSignature, detail: "neither an OpenPGP nor an SSH signature"}
}

// commitPayload is what a commit's signature signs: the commit object
// without its gpgsig header.
func commitPayload(c *object.Commit) ([]byte, error) {
	o := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(o); err != nil {
		return nil, err
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
