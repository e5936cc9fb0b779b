package repo

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/fluxcd/pkg/gittestserver"
)

// testCA makes a CA and a certificate for 127.0.0.1 signed by it, PEM.
func testCA(t *testing.T) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "regatta test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func TestSyncHTTPS(t *testing.T) {
	root := t.TempDir()
	up := newUpstream(t, root, "fleet.git")
	ca, cert, key := testCA(t)
	srv := gittestserver.NewGitServer(root).Auth("alice", "tls-pass-1")
	if err := srv.StartHTTPS(cert, key, ca, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.StopHTTP)
	url := srv.HTTPAddress() + "/fleet.git"
	ctx := context.Background()

	for name, auth := range map[string]Auth{
		"CA bundle":   {Username: "alice", Password: "tls-pass-1", CABundle: ca},
		"insecure":    {Username: "alice", Password: "tls-pass-1", InsecureSkipTLS: true},
		"unknown CA":  {Username: "alice", Password: "tls-pass-1"},
		"wrong creds": {Username: "alice", Password: "nope-nope", CABundle: ca},
	} {
		t.Run(name, func(t *testing.T) {
			src, err := NewSource(Options{URL: url, Auth: auth})
			if err != nil {
				t.Fatal(err)
			}
			rev, _, err := src.Sync(ctx)
			switch name {
			case "unknown CA":
				if err == nil || errors.Is(err, ErrAuthentication) {
					t.Fatalf("want a certificate error, got %v", err)
				}
				t.Log(err)
			case "wrong creds":
				if !errors.Is(err, ErrAuthentication) {
					t.Fatalf("want ErrAuthentication, got %v", err)
				}
			default:
				if err != nil || rev != up.head("main") {
					t.Fatalf("sync: %s %v", rev, err)
				}
			}
		})
	}
}
