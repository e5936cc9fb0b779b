package render

import (
	"context"
	"sync/atomic"

	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// addonRender is the state of one add-on's render: the recorded view of
// the repository, the templater and the decryption keys. Every repository
// file the add-on's source reads goes through readFile.
type addonRender struct {
	ctx  context.Context
	fs   *repoFS
	tpl  *templater
	keys *sops.Keyring
	// decryption restricts decryption to the keys it lists when set.
	decryption *spec.Decryption
	// templateFiles is the add-on's template: true.
	templateFiles bool
	// usedKeys is set once a SOPS document was met: the output then
	// depends on the keys and the cluster's decryption keys.
	usedKeys atomic.Bool
	// allowRemote lets kustomize load remote bases and files; usedRemote
	// is set once a render did.
	allowRemote bool
	usedRemote  atomic.Bool
	r           *Renderer
	profile     *spec.Profile
	plan        *plan
}

// readFile reads a repository file, decrypts it when it is SOPS-encrypted
// and, for a template: true add-on, executes it as a template.
func (a *addonRender) readFile(p string) ([]byte, error) {
	data, err := a.fs.ReadFile(p)
	if err != nil {
		return nil, err
	}
	data, err = a.decrypt(p, data)
	if err != nil {
		return nil, err
	}
	if !a.templateFiles {
		return data, nil
	}
	return a.tpl.execute(p, data)
}

// decrypt returns data decrypted when it is a SOPS document. Errors name
// the file and never hold plaintext.
func (a *addonRender) decrypt(p string, data []byte) ([]byte, error) {
	if !sops.IsEncrypted(data) || a.r.opts.LeaveEncrypted {
		return data, nil
	}
	a.usedKeys.Store(true)
	if a.tenantDenied() {
		return nil, &Error{File: p, Err: ErrTenantNoKeys}
	}
	if a.keys == nil {
		return nil, &Error{File: p, Err: ErrNoKeyring}
	}
	a.r.cache.decrypts.Add(1)
	plain, err := a.keys.Decrypt(a.ctx, p, data, a.decryption)
	if err != nil {
		return nil, &Error{File: p, Err: stripFilePrefix(p, err)}
	}
	return plain, nil
}
