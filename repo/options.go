package repo

import (
	"log/slog"
)

// DefaultBranch is the branch followed when Options.Branch is empty.
const DefaultBranch = "main"

// Options configure a Source.
type Options struct {
	// URL of the repository: https://, http://, ssh://, scp-like
	// (git@host:org/repo.git), file:// or a local path. User info in an
	// http(s) URL is used as basic auth unless Auth sets credentials, and is
	// never logged.
	URL string
	// Branch to follow; DefaultBranch when empty.
	Branch string
	// Auth holds credentials and transport security settings.
	Auth Auth
	// PushAuth, when set, is the credential of pushes only (status
	// commits), so that Auth may be read-only; its transport security
	// settings are Auth's.
	PushAuth *Auth
	// Dir, when set, keeps a bare repository on disk there (it survives
	// restarts); when empty objects are kept in memory.
	Dir string
	// FullHistory fetches the whole history instead of a shallow
	// (depth 1) clone.
	FullHistory bool
	// Logger receives debug and info events; nil discards them.
	Logger *slog.Logger
}

// Auth holds credentials. Its String, GoString and LogValue methods never
// reveal a secret, so an Auth may be logged or printed safely.
type Auth struct {
	// Username and Password for HTTP basic auth.
	Username string
	Password string
	// BearerToken for HTTP "Authorization: Bearer"; wins over Password.
	BearerToken string

	// SSHUser overrides the user of an SSH URL ("git" if neither is set).
	SSHUser string
	// SSHPrivateKey is a PEM or OpenSSH private key; when empty the SSH
	// agent is used.
	SSHPrivateKey []byte
	// SSHKeyPassphrase decrypts SSHPrivateKey.
	SSHKeyPassphrase string
	// KnownHosts is the content of a known_hosts file. When empty the
	// host key is checked against $SSH_KNOWN_HOSTS, ~/.ssh/known_hosts and
	// /etc/ssh/ssh_known_hosts.
	KnownHosts []byte
	// InsecureIgnoreHostKey turns host key checking off. Never the default.
	InsecureIgnoreHostKey bool

	// CABundle adds PEM certificates to trust for HTTPS.
	CABundle []byte
	// InsecureSkipTLS skips HTTPS certificate verification.
	InsecureSkipTLS bool
}

// secrets lists the values that must never appear in an error.
func (a Auth) secrets() []string {
	return []string{a.Password, a.BearerToken, a.SSHKeyPassphrase}
}

// String describes which credentials are set, never their values.
func (a Auth) String() string {
	kind := "none"
	switch {
	case a.BearerToken != "":
		kind = "bearer"
	case a.Password != "":
		kind = "basic(" + a.Username + ")"
	case len(a.SSHPrivateKey) > 0:
		kind = "ssh-key"
	}
	return "Auth{" + kind + "}"
}

// GoString keeps %#v from printing secrets.
func (a Auth) GoString() string { return a.String() }

// LogValue keeps slog from printing secrets.
func (a Auth) LogValue() slog.Value { return slog.StringValue(a.String()) }

func (o Options) branch() string {
	if o.Branch == "" {
		return DefaultBranch
	}
	return o.Branch
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}
