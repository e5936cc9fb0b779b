package repo

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/gitkit"
	"github.com/fluxcd/pkg/gittestserver"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshServer starts gittestserver's SSH server on root and returns the
// repository URL and a known_hosts line for its host key.
func sshServer(t *testing.T, root string) (url string, knownHost string) {
	t.Helper()
	keyDir := t.TempDir()
	srv := gittestserver.NewGitServer(root).KeyDir(keyDir)
	srv.Auth("git", "") // public key authentication (any key is accepted)
	if err := srv.ListenSSH(); err != nil {
		t.Fatal(err)
	}
	go srv.StartSSH() //nolint:errcheck // returns when stopped
	t.Cleanup(func() { _ = srv.StopSSH() })
	return srv.SSHAddress() + "/fleet.git", hostLine(t, srv, keyDir)
}

// hostLine reads the host key gitkit generated into keyDir.
func hostLine(t *testing.T, srv *gittestserver.GitServer, keyDir string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(keyDir, "*.pub"))
	if len(matches) != 1 {
		t.Fatalf("host key not found: %v", matches)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	key, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(srv.SSHAddress(), "ssh://git@")
	return knownhosts.Line([]string{knownhosts.Normalize(addr)}, key)
}

func clientKey(t *testing.T) []byte {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(block)
}

func TestSyncSSH(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	url, known := sshServer(t, root)
	key := clientKey(t)
	ctx := context.Background()

	t.Run("known host", func(t *testing.T) {
		src, err := NewSource(Options{URL: url, Auth: Auth{SSHPrivateKey: key, KnownHosts: []byte(known + "\n")}})
		if err != nil {
			t.Fatal(err)
		}
		rev, _, err := src.Sync(ctx)
		if err != nil || rev != up.head("main") {
			t.Fatalf("sync: %s %v", rev, err)
		}
		assertFile(t, src, rev, "README.md", "fleet\n")
		res, err := src.CommitAndPush(ctx, CommitRequest{Files: map[string][]byte{"status/x": []byte("x")}})
		if err != nil || !res.Committed || up.head(DefaultStatusBranch) != res.SHA {
			t.Fatalf("push over SSH: %+v %v", res, err)
		}
	})
	t.Run("unknown host", func(t *testing.T) {
		other := "[127.0.0.1]:1 " + strings.SplitN(known, " ", 2)[1]
		src, err := NewSource(Options{URL: url, Auth: Auth{SSHPrivateKey: key, KnownHosts: []byte(other)}})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = src.Sync(ctx)
		t.Log(err)
		if !errors.Is(err, ErrHostKey) || !strings.Contains(err.Error(), "not in known_hosts") {
			t.Fatalf("want an unknown host error, got %v", err)
		}
	})
	t.Run("changed host key", func(t *testing.T) {
		host := strings.SplitN(known, " ", 2)[0]
		rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		_, edKey, _ := ed25519.GenerateKey(rand.Reader)
		for _, wrong := range []any{rsaKey, edKey} { // same type as the server's, and another
			signer, err := ssh.NewSignerFromKey(wrong)
			if err != nil {
				t.Fatal(err)
			}
			line := knownhosts.Line([]string{host}, signer.PublicKey())
			src, err := NewSource(Options{URL: url, Auth: Auth{SSHPrivateKey: key, KnownHosts: []byte(line)}})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = src.Sync(ctx)
			t.Log(err)
			if !errors.Is(err, ErrHostKey) {
				t.Fatalf("want a host key error, got %v", err)
			}
		}
	})
	t.Run("hashed known_hosts entry", func(t *testing.T) {
		host, rest, _ := strings.Cut(known, " ")
		line := knownhosts.HashHostname(host) + " " + rest
		src, err := NewSource(Options{URL: url, Auth: Auth{SSHPrivateKey: key, KnownHosts: []byte("# comment\n" + line)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := src.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("insecure opt-out", func(t *testing.T) {
		src, err := NewSource(Options{URL: url, Auth: Auth{SSHPrivateKey: key, InsecureIgnoreHostKey: true}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := src.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSyncSSHKeyRefused(t *testing.T) {
	root := t.TempDir()
	newUpstream(t, root, "fleet.git")
	keyDir := t.TempDir()
	srv := gittestserver.NewGitServer(root).KeyDir(keyDir)
	srv.Auth("git", "")
	// gittestserver keeps the lookup function in a package variable that
	// ListenSSH copies: set it for this server only, then restore it.
	srv.PublicKeyLookupFunc(func(string) (*gitkit.PublicKey, error) {
		return nil, errors.New("key not authorized")
	})
	err := srv.ListenSSH()
	srv.PublicKeyLookupFunc(func(string) (*gitkit.PublicKey, error) {
		return &gitkit.PublicKey{Id: "test-user"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.StartSSH() //nolint:errcheck // returns when stopped
	t.Cleanup(func() { _ = srv.StopSSH() })

	src, err := NewSource(Options{URL: srv.SSHAddress() + "/fleet.git", Auth: Auth{
		SSHPrivateKey: clientKey(t), KnownHosts: []byte(hostLine(t, srv, keyDir)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = src.Sync(context.Background())
	t.Log(err)
	if !errors.Is(err, ErrAuthentication) {
		t.Fatalf("want ErrAuthentication, got %v", err)
	}
}

func TestSSHKeyErrors(t *testing.T) {
	// A throw-away key encrypted with "key-passphrase-1" by
	// `ssh-keygen -t ed25519 -a 1`: one KDF round keeps the test fast
	// under -race (ssh.MarshalPrivateKeyWithPassphrase uses 16).
	encrypted, err := os.ReadFile("testdata/encrypted_ed25519")
	if err != nil {
		t.Fatal(err)
	}
	url := "ssh://git@example.com/fleet.git"
	if _, err := NewSource(Options{URL: url, Auth: Auth{SSHPrivateKey: encrypted, KnownHosts: []byte("x")}}); err == nil {
		t.Fatal("encrypted key without passphrase accepted")
	}
	_, err = NewSource(Options{URL: url, Auth: Auth{SSHPrivateKey: encrypted, SSHKeyPassphrase: "wrong-passphrase", InsecureIgnoreHostKey: true}})
	if err == nil || strings.Contains(err.Error(), "wrong-passphrase") {
		t.Fatalf("wrong passphrase: %v", err)
	}
	if _, err := NewSource(Options{URL: url, Auth: Auth{SSHPrivateKey: encrypted, SSHKeyPassphrase: "key-passphrase-1", InsecureIgnoreHostKey: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSource(Options{URL: url, Auth: Auth{SSHPrivateKey: []byte("garbage"), InsecureIgnoreHostKey: true}}); err == nil {
		t.Fatal("garbage key accepted")
	}
}
