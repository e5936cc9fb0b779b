package sops

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/getsops/sops/v3/keyservice"
	"google.golang.org/grpc"

	"github.com/regatta-dev/regatta/spec"
)

// errNotHere: a key service was not asked for a key (its type is not
// decrypted locally, or a remote service may not serve it).
var errNotHere = errors.New("not tried")

// decryption is the state of one Decrypt: the restriction, the caller's
// context (sops' GetDataKeyWithKeyServices takes none) and the errors of
// each key.
type decryption struct {
	k       *Keyring
	ctx     context.Context
	allowed *spec.Decryption
	mu      sync.Mutex
	errs    map[Key][]error
	// decrypted are the keys that decrypted their part of the data key.
	decrypted map[Key]bool
}

func (d *decryption) succeeded(id Key) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.decrypted[id] = true
}

func (d *decryption) record(id Key, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.errs[id] = append(d.errs[id], err)
}

// guard is a key service client that refuses keys the restriction does
// not allow before any key service sees them, and records each error.
type guard struct {
	d   *decryption
	svc keyservice.KeyServiceClient
	// remote is the URI of a remote key service, empty for the local one.
	remote string
}

func (g *guard) Decrypt(_ context.Context, req *keyservice.DecryptRequest, opts ...grpc.CallOption) (*keyservice.DecryptResponse, error) {
	id := idOf(req.GetKey())
	if err := g.permit(id); err != nil {
		g.d.record(id, err)
		return nil, err
	}
	if err := g.d.ctx.Err(); err != nil {
		g.d.record(id, err)
		return nil, err
	}
	rsp, err := g.svc.Decrypt(g.d.ctx, req, opts...)
	if err == nil {
		g.d.succeeded(id)
	}
	if err != nil {
		if g.remote != "" {
			err = fmt.Errorf("key service %s: %w", g.remote, err)
		}
		g.d.record(id, err)
	}
	return rsp, err
}

// permit refuses a key outside the restriction, and, for a restricted
// file, age and PGP keys at remote services: only the local service can
// prove which private key decrypted.
func (g *guard) permit(id Key) error {
	if !isAllowed(g.d.allowed, id) {
		return fmt.Errorf("%w: not listed in spec.decryption", errNotHere)
	}
	if g.remote != "" && !g.d.allowed.IsEmpty() && (id.Type == KeyTypeAge || id.Type == KeyTypePGP) {
		return fmt.Errorf("%w: key service %s: a restricted cluster decrypts age and PGP keys only locally", errNotHere, g.remote)
	}
	return nil
}

func (g *guard) Encrypt(context.Context, *keyservice.EncryptRequest, ...grpc.CallOption) (*keyservice.EncryptResponse, error) {
	return nil, errors.New("regatta does not encrypt through key services")
}

// localService decrypts in this process: age with the Keyring's
// identities, PGP with gpg, the cloud key types with sops' own key
// service and the environment's credentials.
type localService struct{ d *decryption }

func (l localService) Decrypt(ctx context.Context, req *keyservice.DecryptRequest, _ ...grpc.CallOption) (*keyservice.DecryptResponse, error) {
	id := idOf(req.GetKey())
	k := l.d.k
	if !k.local[id.Type] {
		return nil, fmt.Errorf("%w: not decrypted locally (--sops-local-key-types)", errNotHere)
	}
	var plain []byte
	var err error
	switch id.Type {
	case KeyTypeAge:
		plain, err = k.decryptAge(id.ID, req.GetCiphertext(), l.d.allowed)
	case KeyTypePGP:
		plain, err = k.gpg.decrypt(ctx, id.ID, req.GetCiphertext(), l.d.allowed)
	case KeyTypeVault:
		if !hasVaultToken() {
			return nil, errNoVaultToken
		}
		fallthrough
	default:
		var rsp *keyservice.DecryptResponse
		if rsp, err = k.cloud.Decrypt(ctx, req); err == nil {
			plain = rsp.GetPlaintext()
		}
		err = cloudError(id.Type, err)
	}
	if err != nil {
		return nil, err
	}
	return &keyservice.DecryptResponse{Plaintext: plain}, nil
}

func (l localService) Encrypt(context.Context, *keyservice.EncryptRequest, ...grpc.CallOption) (*keyservice.EncryptResponse, error) {
	return nil, errors.New("regatta does not encrypt through key services")
}
