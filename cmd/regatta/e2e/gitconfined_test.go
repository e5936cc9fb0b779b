package e2e

import (
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitUser is what one user of a confinedGit server may do: fetch, and
// push the refs listed (exactly those).
type gitUser struct {
	password string
	fetch    bool
	push     []string
}

// confinedGit serves the bare repositories under root over Git's smart
// HTTP protocol, through the real `git http-backend` (net/http/cgi), with
// basic auth and per-user rules as Git hosts enforce them: a user without
// fetch is refused upload-pack, one without refs to push is refused
// receive-pack, and the repository's pre-receive hook refuses every ref a
// user may not push.
type confinedGit struct {
	root  string
	users map[string]gitUser
	srv   *http.Server
	addr  string
}

// preReceive refuses the refs the pushing user ($REMOTE_USER) may not push
// ($CONFINED_REFS, set by the server per request). Pushes through the file
// system (the test's own commits, as the host's administrators) are not
// confined.
const preReceive = `#!/bin/sh
[ -z "$REMOTE_USER" ] && exit 0
while read old new ref; do
  ok=no
  for allowed in $CONFINED_REFS; do
    [ "$ref" = "$allowed" ] && ok=yes
  done
  if [ "$ok" = no ]; then
    echo "user $REMOTE_USER may not push $ref" >&2
    exit 1
  fi
done
`

func newConfinedGit(t *testing.T, root string, users map[string]gitUser) *confinedGit {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	g := &confinedGit{root: root, users: users}
	backend := func(user string) http.Handler {
		return &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Env: []string{
			"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=" + user,
			"CONFINED_REFS=" + strings.Join(users[user].push, " "),
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + root,
		}}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.addr = l.Addr().String()
	g.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, pw, ok := r.BasicAuth()
		u, known := users[name]
		if !ok || !known || pw != u.password {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		service := r.URL.Query().Get("service")
		if service == "" {
			service = filepath.Base(r.URL.Path)
		}
		if (service == "git-upload-pack" && !u.fetch) || (service == "git-receive-pack" && len(u.push) == 0) ||
			(service != "git-upload-pack" && service != "git-receive-pack") {
			http.Error(w, "user "+name+" may not use "+service, http.StatusForbidden)
			return
		}
		backend(name).ServeHTTP(w, r)
	})}
	go g.srv.Serve(l)
	t.Cleanup(func() { g.srv.Close() })
	return g
}

// confine installs the pre-receive hook in a bare repository under root.
func (g *confinedGit) confine(t *testing.T, bare string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(preReceive), 0o755); err != nil {
		t.Fatal(err)
	}
}

// url is the address of a repository under root for a user.
func (g *confinedGit) url(user, repo string) string {
	return "http://" + user + ":" + g.users[user].password + "@" + g.addr + "/" + repo
}
