package render

import (
	"errors"
	"fmt"
	"strings"
)

// ErrRemoteRefused is wrapped by the error for a kustomization that refers
// to a remote base or file while Options.AllowRemoteBases is off.
var ErrRemoteRefused = errors.New("remote bases and files are disabled (Options.AllowRemoteBases)")

// Error is a render failure, located as precisely as it is known:
//
//	profile kyverno: addon policies: addons/x/deploy.yaml:12: document has no kind
//
// Profile and Addon are empty for failures outside an add-on; File and Line
// are empty or zero when the failure has no place in the repository.
type Error struct {
	Profile string
	Addon   string
	File    string
	Line    int
	// Column is set where the source gives it (Jsonnet).
	Column int
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Profile != "" {
		fmt.Fprintf(&b, "profile %s: ", e.Profile)
	}
	if e.Addon != "" {
		fmt.Fprintf(&b, "addon %s: ", e.Addon)
	}
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		if e.Line > 0 && e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// fileError locates err in a repository file. It keeps the most precise
// place: an *Error already naming a file is returned as is.
func fileError(file string, line int, err error) error {
	var re *Error
	if errors.As(err, &re) && re.File != "" {
		return err
	}
	return &Error{File: file, Line: line, Err: err}
}

// inAddon stamps profile and add-on names on err, which becomes an *Error.
func inAddon(profile, addon string, err error) error {
	var re *Error
	if errors.As(err, &re) {
		out := *re
		out.Profile, out.Addon = profile, addon
		return &out
	}
	return &Error{Profile: profile, Addon: addon, Err: err}
}

// ErrNoKeyring is the failure to decrypt without any configured key.
var ErrNoKeyring = errors.New("file is encrypted with SOPS but no SOPS keys are configured (--sops-age-key-file, SOPS_AGE_KEY_FILE)")

// stripFilePrefix drops a leading "file: " that err repeats, since the
// *Error around it names the file already.
func stripFilePrefix(file string, err error) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, file+": "); ok {
		return &wrapped{msg: rest, err: err}
	}
	return err
}

// wrapped is an error with a reworded message that still unwraps.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// Innermost returns the innermost *Error in err's chain that names a file
// and a cause (nil when none does), and the innermost add-on named on the
// way: where a render failure happened, for status and diagnostics.
func Innermost(err error) (*Error, string) {
	var found *Error
	addon := ""
	for e := err; e != nil; {
		var re *Error
		if !errors.As(e, &re) {
			break
		}
		if re.Addon != "" {
			addon = re.Addon
		}
		if re.File != "" && re.Err != nil {
			found = re
		}
		e = re.Err
	}
	return found, addon
}
