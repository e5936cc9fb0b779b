package repo

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
)

// Transport kinds of an endpoint.
const (
	protoHTTP  = "http"
	protoSSH   = "ssh"
	protoLocal = "file"
)

// endpoint is a parsed repository URL with its credentials split off.
type endpoint struct {
	proto    string // protoHTTP, protoSSH or protoLocal
	url      string // what go-git dials: no http credentials
	display  string // redacted, for errors and logs
	user     string // user info taken from the URL
	password string
	path     string // absolute path of a local repository
	hostport string // host:port of an SSH server
}

// parseEndpoint classifies a repository URL or path.
func parseEndpoint(raw string) (endpoint, error) {
	if raw == "" {
		return endpoint{}, fmt.Errorf("repository URL is empty")
	}
	ep, err := transport.NewEndpoint(raw)
	if err != nil {
		return endpoint{}, fmt.Errorf("invalid repository URL %s", RedactURL(raw))
	}
	switch ep.Protocol {
	case "http", "https":
		return httpEndpoint(raw)
	case "ssh":
		return sshEndpoint(raw, ep), nil
	case "file":
		return localEndpoint(ep.Path)
	}
	return endpoint{}, fmt.Errorf("unsupported protocol %q in %s", ep.Protocol, RedactURL(raw))
}

func httpEndpoint(raw string) (endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return endpoint{}, fmt.Errorf("invalid repository URL %s", RedactURL(raw))
	}
	e := endpoint{proto: protoHTTP}
	if u.User != nil {
		e.user = u.User.Username()
		e.password, _ = u.User.Password()
		u.User = nil
	}
	e.url = u.String()
	e.display = e.url
	return e, nil
}

func sshEndpoint(raw string, ep *transport.Endpoint) endpoint {
	port := ep.Port
	if port == 0 {
		port = 22
	}
	hostport := net.JoinHostPort(strings.Trim(ep.Host, "[]"), strconv.Itoa(port))
	e := endpoint{proto: protoSSH, user: ep.User, url: raw, hostport: hostport}
	if u, err := url.Parse(raw); err == nil && u.Scheme == "ssh" && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.User(u.User.Username())
			e.url = u.String()
		}
	}
	e.display = e.url
	return e
}

func localEndpoint(p string) (endpoint, error) {
	abs, err := filepath.Abs(strings.TrimPrefix(p, "file://"))
	if err != nil {
		return endpoint{}, err
	}
	return endpoint{proto: protoLocal, url: abs, display: abs, path: abs}, nil
}

// userInfoRE matches the user info of URLs inside free text.
var userInfoRE = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@`)

// RedactURL hides the credentials of a URL so that it can be logged. For
// http(s) the whole user info is hidden (a token may be passed as the user
// name); for other schemes only a password is. Text that is not a URL is
// returned with any embedded user info hidden.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil || u.Scheme == "" {
		return userInfoRE.ReplaceAllString(raw, "${1}redacted@")
	}
	switch {
	case u.Scheme == "http" || u.Scheme == "https":
		u.User = url.User("redacted")
	default:
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "redacted")
		}
	}
	return u.String()
}

// scrub removes secrets and URL user info from a message.
func scrub(msg string, secrets []string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "redacted")
			msg = strings.ReplaceAll(msg, url.QueryEscape(s), "redacted")
		}
	}
	return userInfoRE.ReplaceAllString(msg, "${1}redacted@")
}

// CanonicalURL names a repository location independently of how it is
// reached: host and path without scheme, user, port, ".git" or trailing
// "/" (https://github.com/org/fleet.git and git@github.com:org/fleet are
// both github.com/org/fleet), or the absolute path of a local repository.
// Use it to derive identities that survive switching between HTTPS and SSH.
func CanonicalURL(raw string) (string, error) {
	ep, err := parseEndpoint(raw)
	if err != nil {
		return "", err
	}
	if ep.proto == protoLocal {
		return strings.TrimSuffix(filepath.ToSlash(ep.path), "/"), nil
	}
	te, err := transport.NewEndpoint(raw)
	if err != nil {
		return "", fmt.Errorf("invalid repository URL %s", RedactURL(raw))
	}
	p := strings.TrimSuffix(strings.Trim(te.Path, "/"), ".git")
	return strings.ToLower(te.Host) + "/" + p, nil
}
