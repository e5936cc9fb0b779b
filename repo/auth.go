package repo

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
)

// defaultSSHUser is used when neither the URL nor Auth names a user.
const defaultSSHUser = "git"

// authMethod maps Auth to the go-git auth method for an endpoint. It returns
// nil when the transport needs none.
func authMethod(ep endpoint, a Auth) (transport.AuthMethod, error) {
	switch ep.proto {
	case protoHTTP:
		return httpAuth(ep, a), nil
	case protoSSH:
		return sshAuth(ep, a)
	}
	return nil, nil
}

func httpAuth(ep endpoint, a Auth) transport.AuthMethod {
	switch {
	case a.BearerToken != "":
		return &githttp.TokenAuth{Token: a.BearerToken}
	case a.Username != "" || a.Password != "":
		return &githttp.BasicAuth{Username: a.Username, Password: a.Password}
	case ep.user != "" || ep.password != "":
		return &githttp.BasicAuth{Username: ep.user, Password: ep.password}
	}
	return nil
}

func sshAuth(ep endpoint, a Auth) (transport.AuthMethod, error) {
	user := firstNonEmpty(a.SSHUser, ep.user, defaultSSHUser)
	helper, err := hostKeyHelper(ep, a)
	if err != nil {
		return nil, err
	}
	if len(a.SSHPrivateKey) == 0 {
		agent, err := gitssh.NewSSHAgentAuth(user)
		if err != nil {
			return nil, fmt.Errorf("no SSH private key given and no SSH agent: %w", err)
		}
		agent.HostKeyCallbackHelper = helper
		return agent, nil
	}
	signer, err := parseSigner(a.SSHPrivateKey, a.SSHKeyPassphrase)
	if err != nil {
		return nil, err
	}
	return &gitssh.PublicKeys{User: user, Signer: signer, HostKeyCallbackHelper: helper}, nil
}

func parseSigner(key []byte, passphrase string) (ssh.Signer, error) {
	signer, err := ssh.ParsePrivateKey(key)
	if _, ok := err.(*ssh.PassphraseMissingError); ok {
		if passphrase == "" {
			return nil, fmt.Errorf("SSH private key is encrypted and no passphrase was given")
		}
		signer, err = ssh.ParsePrivateKeyWithPassphrase(key, []byte(passphrase))
	}
	if err != nil {
		// The parser's message never contains key material.
		return nil, fmt.Errorf("invalid SSH private key: %w", err)
	}
	return signer, nil
}

// hostKeyHelper checks host keys against Auth.KnownHosts, or the system
// known_hosts files when none is given (go-git's default), or not at all
// with the explicit insecure opt-out.
func hostKeyHelper(ep endpoint, a Auth) (gitssh.HostKeyCallbackHelper, error) {
	switch {
	case a.InsecureIgnoreHostKey:
		return gitssh.HostKeyCallbackHelper{HostKeyCallback: ssh.InsecureIgnoreHostKey()}, nil
	case len(a.KnownHosts) > 0:
		kh, err := parseKnownHosts(a.KnownHosts)
		if err != nil {
			return gitssh.HostKeyCallbackHelper{}, err
		}
		return gitssh.HostKeyCallbackHelper{
			HostKeyCallback:   kh.callback,
			HostKeyAlgorithms: kh.algorithms(ep.hostport),
		}, nil
	}
	return gitssh.HostKeyCallbackHelper{}, nil
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
