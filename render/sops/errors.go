package sops

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotEncrypted: the document has no top-level sops metadata.
	ErrNotEncrypted = errors.New("document is not encrypted with sops")
	// ErrMalformed: the document or its sops metadata cannot be parsed.
	ErrMalformed = errors.New("malformed sops document")
	// ErrNoKey: no usable age identity can decrypt the data key.
	ErrNoKey = errors.New("no age identity can decrypt")
	// ErrIntegrity: the MAC or a value's authentication tag does not match.
	ErrIntegrity = errors.New("integrity check failed")
)

// FileError names the file a decryption error belongs to.
type FileError struct {
	File string
	Err  error
}

func (e *FileError) Error() string { return e.File + ": sops: " + e.Err.Error() }

func (e *FileError) Unwrap() error { return e.Err }

// NoKeyError reports that none of the identities that may be used for this
// file matches one of its recipients.
type NoKeyError struct {
	// Recipients are the age recipients the file was encrypted for.
	Recipients []string
	// OtherKeys counts master keys of other types (pgp, kms, ...).
	OtherKeys int
	// Restricted is true when allowedRecipients excluded some identities.
	Restricted bool
}

func (e *NoKeyError) Error() string {
	who := "no age identity"
	if e.Restricted {
		who = "no age identity allowed for this cluster"
	}
	short := make([]string, len(e.Recipients))
	for i, r := range e.Recipients {
		short[i] = abbreviate(r)
	}
	in := strings.Join(short, ", ")
	if e.OtherKeys > 0 {
		in = strings.TrimPrefix(fmt.Sprintf("%s, %d non-age keys", in, e.OtherKeys), ", ")
	}
	if in == "" {
		in = "none"
	}
	return fmt.Sprintf("%s can decrypt (recipients in file: %s)", who, in)
}

// Is makes errors.Is(err, ErrNoKey) true.
func (e *NoKeyError) Is(target error) bool { return target == ErrNoKey }

// integrityError explains an integrity failure without any plaintext.
type integrityError struct{ detail string }

func (e *integrityError) Error() string {
	return "integrity check failed: " + e.detail
}

func (e *integrityError) Is(target error) bool { return target == ErrIntegrity }

// malformedError wraps a parse error of the encrypted document.
type malformedError struct{ err error }

func (e *malformedError) Error() string { return "malformed sops document: " + e.err.Error() }

func (e *malformedError) Unwrap() error { return e.err }

func (e *malformedError) Is(target error) bool { return target == ErrMalformed }

// abbreviate shortens a public key for messages: age1qyqszqgp…
func abbreviate(recipient string) string {
	const keep = 12
	if len(recipient) <= keep+3 {
		return recipient
	}
	return recipient[:keep] + "…"
}
