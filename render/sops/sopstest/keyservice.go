package sopstest

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/getsops/sops/v3/keyservice"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// KeyService is an in-process sops key service for the cloud key types:
// it "wraps" a data key for an AWS KMS ARN, GCP KMS resource ID, Azure Key
// Vault key or Vault transit key with AES-GCM under a secret it derives
// from its own random root and the key's identity, as the cloud service
// would with the real key. It refuses age and PGP keys (those are
// decrypted by regatta itself). Serve it with Start; URI is what the sops
// CLI's --keyservice and regatta's --sops-keyservice take.
type KeyService struct {
	keyservice.UnimplementedKeyServiceServer
	URI  string
	root []byte

	mu sync.Mutex
	// Decrypts counts decrypt requests by key type (kms, gcp_kms,
	// azure_kv, hc_vault).
	decrypts map[string]int
	// Deny makes Decrypt fail for these key ids, as a cloud service does
	// without credentials or permission.
	deny map[string]bool
}

// StartKeyService serves a KeyService on a unix socket until the test
// ends.
func StartKeyService(t testing.TB) *KeyService {
	t.Helper()
	dir, err := os.MkdirTemp("", "ks")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "keyservice.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ks := &KeyService{URI: "unix://" + sock, root: make([]byte, 32), decrypts: map[string]int{}, deny: map[string]bool{}}
	if _, err := rand.Read(ks.root); err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	keyservice.RegisterKeyServiceServer(srv, ks)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
		_ = os.RemoveAll(dir)
	})
	return ks
}

// Decrypts returns how many decrypt requests keys of keyType got.
func (ks *KeyService) Decrypts(keyType string) int {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.decrypts[keyType]
}

// Deny makes decrypt requests for the key id (ARN, resource ID, ...)
// fail with PermissionDenied.
func (ks *KeyService) Deny(id string) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.deny[id] = true
}

// Encrypt wraps a data key for a cloud key.
func (ks *KeyService) Encrypt(_ context.Context, req *keyservice.EncryptRequest) (*keyservice.EncryptResponse, error) {
	typ, id, err := identify(req.GetKey())
	if err != nil {
		return nil, err
	}
	aead := ks.aead(typ, id)
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	// Base64, as the cloud key sources of sops store their ciphertexts.
	sealed := aead.Seal(nonce, nonce, req.GetPlaintext(), []byte(id))
	return &keyservice.EncryptResponse{Ciphertext: []byte(base64.StdEncoding.EncodeToString(sealed))}, nil
}

// Decrypt unwraps a data key wrapped by Encrypt for the same key.
func (ks *KeyService) Decrypt(_ context.Context, req *keyservice.DecryptRequest) (*keyservice.DecryptResponse, error) {
	typ, id, err := identify(req.GetKey())
	if err != nil {
		return nil, err
	}
	ks.mu.Lock()
	ks.decrypts[typ]++
	denied := ks.deny[id]
	ks.mu.Unlock()
	if denied {
		return nil, status.Errorf(codes.PermissionDenied, "%s: access denied", id)
	}
	aead := ks.aead(typ, id)
	ct, err := base64.StdEncoding.DecodeString(string(req.GetCiphertext()))
	if err != nil || len(ct) < aead.NonceSize() {
		return nil, status.Error(codes.InvalidArgument, "ciphertext too short")
	}
	plain, err := aead.Open(nil, ct[:aead.NonceSize()], ct[aead.NonceSize():], []byte(id))
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: the ciphertext was not wrapped with this key", id)
	}
	return &keyservice.DecryptResponse{Plaintext: plain}, nil
}

func (ks *KeyService) aead(typ, id string) cipher.AEAD {
	sum := sha256.Sum256(append(append(append([]byte{}, ks.root...), typ...), id...))
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		panic(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}

// identify names a cloud key by type and id.
func identify(key *keyservice.Key) (string, string, error) {
	switch k := key.GetKeyType().(type) {
	case *keyservice.Key_KmsKey:
		return "kms", k.KmsKey.GetArn(), nil
	case *keyservice.Key_GcpKmsKey:
		return "gcp_kms", k.GcpKmsKey.GetResourceId(), nil
	case *keyservice.Key_AzureKeyvaultKey:
		a := k.AzureKeyvaultKey
		return "azure_kv", a.GetVaultUrl() + "/keys/" + a.GetName() + "/" + a.GetVersion(), nil
	case *keyservice.Key_VaultKey:
		v := k.VaultKey
		return "hc_vault", v.GetVaultAddress() + "/v1/" + v.GetEnginePath() + "/keys/" + v.GetKeyName(), nil
	}
	return "", "", status.Error(codes.Unimplemented, errors.New("this test key service serves cloud key types only").Error())
}
