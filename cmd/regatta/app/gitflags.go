package app

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/regatta-dev/regatta/repo"
)

// gitFlags are the Git credentials every command that reaches a remote
// repository takes. Secrets come from files (mounted Secret style) or the
// environment, never from the command line where ps would show them.
type gitFlags struct {
	username          string
	passwordFile      string
	tokenFile         string
	sshKeyFile        string
	sshKnownHostsFile string
	insecureHostKey   bool
	caFile            string
	// prefix of the flags named in errors: "git-" when empty.
	prefix string
}

func (g *gitFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&g.username, "git-username", "", "user name for HTTPS basic auth (password from --git-password-file or $REGATTA_GIT_PASSWORD)")
	fl.StringVar(&g.passwordFile, "git-password-file", "", "file holding the HTTPS password or access token")
	fl.StringVar(&g.tokenFile, "git-token-file", "", "file holding a bearer token for HTTPS (or $REGATTA_GIT_TOKEN)")
	fl.StringVar(&g.sshKeyFile, "git-ssh-key-file", "", "SSH private key file for ssh:// and git@host: URLs")
	fl.StringVar(&g.sshKnownHostsFile, "git-known-hosts-file", "", "known_hosts file for SSH host key checking (default ~/.ssh/known_hosts)")
	fl.BoolVar(&g.insecureHostKey, "git-insecure-ignore-host-key", false, "turn SSH host key checking off (never do this in production)")
	fl.StringVar(&g.caFile, "git-ca-file", "", "PEM bundle of extra CAs to trust for HTTPS")
}

// auth reads the credentials the flags point at.
func (g *gitFlags) auth() (repo.Auth, error) {
	return g.authWith(os.Getenv("REGATTA_GIT_PASSWORD"), os.Getenv("REGATTA_GIT_TOKEN"))
}

// authWith reads the credentials the flags point at, with the password
// and token of the environment.
func (g *gitFlags) authWith(password, token string) (repo.Auth, error) {
	a := repo.Auth{
		Username:              g.username,
		Password:              password,
		BearerToken:           token,
		InsecureIgnoreHostKey: g.insecureHostKey,
	}
	prefix := "--" + g.prefix
	if g.prefix == "" {
		prefix = "--git-"
	}
	for _, f := range []struct {
		path string
		dst  *[]byte
		str  *string
		what string
	}{
		{g.passwordFile, nil, &a.Password, prefix + "password-file"},
		{g.tokenFile, nil, &a.BearerToken, prefix + "token-file"},
		{g.sshKeyFile, &a.SSHPrivateKey, nil, prefix + "ssh-key-file"},
		{g.sshKnownHostsFile, &a.KnownHosts, nil, "--git-known-hosts-file"},
		{g.caFile, &a.CABundle, nil, "--git-ca-file"},
	} {
		if f.path == "" {
			continue
		}
		b, err := os.ReadFile(f.path)
		if err != nil {
			return a, usageError("%s: %v", f.what, err)
		}
		if f.dst != nil {
			*f.dst = b
		} else {
			*f.str = trimNewline(string(b))
		}
	}
	if a.Password != "" && a.Username == "" {
		a.Username = "git"
	}
	return a, nil
}

func trimNewline(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

// statusGitFlags are a credential for status pushes only (--status-git-*),
// so that the --git-* credential may be read-only: an agent's may then
// read the fleet repository and push nothing but its own status ref. Host
// keys and CAs are the --git-* ones.
type statusGitFlags struct {
	username     string
	passwordFile string
	tokenFile    string
	sshKeyFile   string
}

func (s *statusGitFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&s.username, "status-git-username", "", "user name for HTTPS basic auth of status pushes only (password from --status-git-password-file or $REGATTA_STATUS_GIT_PASSWORD); default: the --git-* credential")
	fl.StringVar(&s.passwordFile, "status-git-password-file", "", "file holding the HTTPS password or access token of status pushes only")
	fl.StringVar(&s.tokenFile, "status-git-token-file", "", "file holding a bearer token for status pushes only (or $REGATTA_STATUS_GIT_TOKEN)")
	fl.StringVar(&s.sshKeyFile, "status-git-ssh-key-file", "", "SSH private key file for status pushes only")
}

// auth is the status push credential; nil when none is set (status
// pushes use the --git-* credential).
func (s *statusGitFlags) auth() (*repo.Auth, error) {
	password, token := os.Getenv("REGATTA_STATUS_GIT_PASSWORD"), os.Getenv("REGATTA_STATUS_GIT_TOKEN")
	if s.username == "" && s.passwordFile == "" && s.tokenFile == "" && s.sshKeyFile == "" && password == "" && token == "" {
		return nil, nil
	}
	g := gitFlags{username: s.username, passwordFile: s.passwordFile, tokenFile: s.tokenFile, sshKeyFile: s.sshKeyFile, prefix: "status-git-"}
	a, err := g.authWith(password, token)
	if err != nil {
		return nil, err
	}
	if a.Password == "" && a.BearerToken == "" && len(a.SSHPrivateKey) == 0 {
		return nil, usageError("--status-git-username needs --status-git-password-file, --status-git-token-file or their environment variables")
	}
	return &a, nil
}
