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
	a := repo.Auth{
		Username:              g.username,
		Password:              os.Getenv("REGATTA_GIT_PASSWORD"),
		BearerToken:           os.Getenv("REGATTA_GIT_TOKEN"),
		InsecureIgnoreHostKey: g.insecureHostKey,
	}
	for _, f := range []struct {
		path string
		dst  *[]byte
		str  *string
		what string
	}{
		{g.passwordFile, nil, &a.Password, "--git-password-file"},
		{g.tokenFile, nil, &a.BearerToken, "--git-token-file"},
		{g.sshKeyFile, &a.SSHPrivateKey, nil, "--git-ssh-key-file"},
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
