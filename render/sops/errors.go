package sops

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotEncrypted: the document has no sops metadata.
	ErrNotEncrypted = errors.New("document is not encrypted with sops")
	// ErrMalformed: the document or its sops metadata cannot be parsed.
	ErrMalformed = errors.New("malformed sops document")
	// ErrNoKey: no master key of the file could be used to decrypt it.
	ErrNoKey = errors.New("no key can decrypt")
	// ErrNotAllowed: the file is not encrypted to keys the cluster or
	// tenant may use (spec.decryption). It also matches ErrNoKey.
	ErrNotAllowed = errors.New("not encrypted to a key this cluster may use")
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

// KeyError is why one master key of a file did not decrypt its data key:
// the key (type and id) and what is missing, such as "no AWS
// credentials" or "not in the keyring".
type KeyError struct {
	Type string
	ID   string
	Err  error
}

func (e *KeyError) Error() string {
	return Key{e.Type, e.ID}.String() + ": " + e.Err.Error()
}

func (e *KeyError) Unwrap() error { return e.Err }

// NoKeyError reports that the data key could not be recovered: no key of
// a key group decrypted (or fewer groups than the Shamir threshold). A
// group that decrypted has no errors.
type NoKeyError struct {
	// Groups are the key groups of the file, each with the errors of its
	// keys (empty for a group that decrypted).
	Groups [][]*KeyError
	// Threshold is the number of groups needed.
	Threshold int
}

func (e *NoKeyError) Error() string {
	var b strings.Builder
	if len(e.Groups) > 1 {
		ok := 0
		for _, g := range e.Groups {
			if len(g) == 0 {
				ok++
			}
		}
		fmt.Fprintf(&b, "the data key needs %d of %d key groups, %d decrypted", e.Threshold, len(e.Groups), ok)
	} else {
		b.WriteString("no key can decrypt the data key")
	}
	sep := ": "
	for i, g := range e.Groups {
		for _, ke := range g {
			b.WriteString(sep)
			if len(e.Groups) > 1 {
				fmt.Fprintf(&b, "group %d: ", i+1)
			}
			b.WriteString(ke.Error())
			sep = "; "
		}
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNoKey) true.
func (e *NoKeyError) Is(target error) bool { return target == ErrNoKey }

// Unwrap returns the key errors, so errors.As finds a *KeyError.
func (e *NoKeyError) Unwrap() []error {
	var out []error
	for _, g := range e.Groups {
		for _, ke := range g {
			out = append(out, ke)
		}
	}
	return out
}

// NotAllowedError reports a file whose keys a spec.decryption does not
// list (in too few key groups to reach the threshold).
type NotAllowedError struct {
	// Keys are the master keys of the file ("age key age1…", ...).
	Keys []string
	// Threshold is the number of key groups needed; Usable how many have
	// an allowed key.
	Threshold, Usable int
}

func (e *NotAllowedError) Error() string {
	in := strings.Join(e.Keys, ", ")
	if in == "" {
		in = "none"
	}
	msg := "not encrypted to a key this cluster may use (spec.decryption)"
	if e.Threshold > 1 {
		msg = fmt.Sprintf("%s: %d key groups needed, %d have an allowed key", msg, e.Threshold, e.Usable)
	}
	return fmt.Sprintf("%s; keys in file: %s", msg, in)
}

// Is makes errors.Is true for ErrNotAllowed and ErrNoKey.
func (e *NotAllowedError) Is(target error) bool { return target == ErrNotAllowed || target == ErrNoKey }

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
