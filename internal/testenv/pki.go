package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// clusterFiles are the credentials of one cluster, written once into its
// folder and reused by every restart so that kubeconfigs stay valid.
type clusterFiles struct {
	caPEM       []byte // CA that signed the serving certificate
	servingCert string
	servingKey  string
	saPublic    string // service-account token verification key
	saPrivate   string // service-account token signing key
	tokenFile   string // --token-auth-file
	adminToken  string
}

// writeClusterFiles creates the CA, serving certificate, service-account key
// pair and token file of a cluster in dir.
func writeClusterFiles(dir string) (*clusterFiles, error) {
	f := &clusterFiles{
		servingCert: filepath.Join(dir, "serving.crt"),
		servingKey:  filepath.Join(dir, "serving.key"),
		saPublic:    filepath.Join(dir, "sa.pub"),
		saPrivate:   filepath.Join(dir, "sa.key"),
		tokenFile:   filepath.Join(dir, "tokens.csv"),
	}
	steps := []func() error{f.writeTLS, f.writeServiceAccountKeys, f.writeTokens}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, fmt.Errorf("write credentials into %s: %w", dir, err)
		}
	}
	return f, nil
}

func (f *clusterFiles) writeTLS() error {
	caKey, caCert, err := newCA()
	if err != nil {
		return err
	}
	key, certDER, err := newServingCert(caKey, caCert)
	if err != nil {
		return err
	}
	f.caPEM = pemBlock("CERTIFICATE", caCert.Raw)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	// The serving file carries the chain so that clients see the CA too.
	chain := append(pemBlock("CERTIFICATE", certDER), f.caPEM...)
	if err := os.WriteFile(f.servingCert, chain, 0o600); err != nil {
		return err
	}
	return os.WriteFile(f.servingKey, pemBlock("EC PRIVATE KEY", keyDER), 0o600)
}

func newCA() (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := certTemplate("regatta-testenv-ca")
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return key, cert, err
}

func newServingCert(caKey *ecdsa.PrivateKey, ca *x509.Certificate) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := certTemplate("kube-apiserver")
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)}
	tmpl.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	return key, der, err
}

func certTemplate(cn string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(7 * 24 * time.Hour),
	}
}

func (f *clusterFiles) writeServiceAccountKeys() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	priv, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(f.saPrivate, pemBlock("EC PRIVATE KEY", priv), 0o600); err != nil {
		return err
	}
	return os.WriteFile(f.saPublic, pemBlock("PUBLIC KEY", pub), 0o600)
}

// writeTokens writes a static token file with one admin in system:masters.
func (f *clusterFiles) writeTokens() error {
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		return err
	}
	f.adminToken = hex.EncodeToString(buf)
	line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", f.adminToken, AdminUser, AdminUser)
	return os.WriteFile(f.tokenFile, []byte(line), 0o600)
}

// AdminUser is the user name of the admin token in every cluster's kubeconfig.
const AdminUser = "regatta-testenv-admin"

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
