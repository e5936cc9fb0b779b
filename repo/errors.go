package repo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
)

// Sentinel errors; test for them with errors.Is on any error of this package.
var (
	// ErrAuthentication: the server refused the credentials (HTTP 401/403,
	// SSH public key refused).
	ErrAuthentication = errors.New("authentication failed")
	// ErrHostKey: the SSH server's host key is unknown or does not match
	// known_hosts.
	ErrHostKey = errors.New("host key verification failed")
	// ErrRepositoryNotFound: the server has no repository at that URL.
	ErrRepositoryNotFound = errors.New("repository not found")
	// ErrBranchNotFound: the remote has no such branch.
	ErrBranchNotFound = errors.New("branch not found")
	// ErrRevisionNotFound: a revision does not resolve to a commit.
	ErrRevisionNotFound = errors.New("revision not found")
	// ErrNotSynced: no revision has been fetched yet.
	ErrNotSynced = errors.New("no revision fetched yet")
	// ErrPushRejected: a push was still rejected after all retries.
	ErrPushRejected = errors.New("push rejected")
	// ErrSymlinkEscape: a symlink in a tree points outside the tree.
	ErrSymlinkEscape = errors.New("symlink points outside the repository")
	// ErrSubmodule: a path is a submodule, which trees do not follow.
	ErrSubmodule = errors.New("submodules are not supported")
)

// Error is a failed operation against a repository. URL is always redacted
// and Err is scrubbed of credentials.
type Error struct {
	Op   string // "list", "fetch", "push", "resolve", "open", ...
	URL  string // redacted
	Kind error  // one of the sentinel errors, or nil
	Err  error  // the cause, scrubbed of secrets
}

func (e *Error) Error() string {
	switch {
	case e.Kind == ErrAuthentication || e.Kind == ErrHostKey:
		detail := strings.TrimPrefix(fmt.Sprint(e.Err), "ssh: handshake failed: ")
		return fmt.Sprintf("%v for %s: %s", e.Kind, e.URL, strings.TrimPrefix(detail, e.Kind.Error()+": "))
	case e.Kind != nil && (e.Err == nil || strings.HasPrefix(e.Err.Error(), e.Kind.Error())):
		return fmt.Sprintf("%s %s: %v", e.Op, e.URL, firstErr(e.Err, e.Kind))
	case e.Kind != nil:
		return fmt.Sprintf("%s %s: %v: %v", e.Op, e.URL, e.Kind, e.Err)
	}
	return fmt.Sprintf("%s %s: %v", e.Op, e.URL, e.Err)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Unwrap exposes both the kind and the cause to errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// scrubbedError carries a cause whose message had secrets removed.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// wrapError turns a go-git error into an *Error naming the operation and
// the redacted URL, classified and scrubbed of the given secrets.
func wrapError(op, display string, secrets []string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	msg := strings.TrimRight(scrub(err.Error(), secrets), ": ")
	return &Error{Op: op, URL: display, Kind: classify(err), Err: &scrubbedError{msg: msg, err: err}}
}

// classify maps transport errors to this package's sentinels.
func classify(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired),
		errors.Is(err, transport.ErrAuthorizationFailed),
		strings.Contains(msg, "unable to authenticate"):
		return ErrAuthentication
	case errors.Is(err, ErrHostKey), strings.Contains(msg, "knownhosts:"), strings.Contains(msg, "known_hosts"),
		strings.Contains(msg, "no common algorithm for host key"):
		return ErrHostKey
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return ErrRepositoryNotFound
	case errors.Is(err, ErrBranchNotFound):
		return ErrBranchNotFound
	}
	return nil
}
