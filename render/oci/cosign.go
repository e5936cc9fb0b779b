package oci

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
)

// Cosign's simple signing format: the signatures of an artifact are the
// layers of the manifest tagged sha256-<hex>.sig in the same repository,
// each a JSON payload naming the signed digest, with its signature (base64
// ASN.1 ECDSA over the payload's SHA-256) in an annotation.
const (
	CosignPayloadType   = "application/vnd.dev.cosign.simplesigning.v1+json"
	CosignSignatureAnno = "dev.cosignproject.cosign/signature"
	cosignType          = "cosign container image signature"
	maxSignatures       = 64
	maxPayload          = 64 << 10
)

// Errors of a signature check.
var (
	ErrNoSignature  = errors.New("no cosign signature")
	ErrBadSignature = errors.New("no cosign signature verifies with the public key")
)

// ParsePublicKey reads a PEM "PUBLIC KEY" (PKIX) ECDSA P-256 key, the kind
// `cosign generate-key-pair` writes to cosign.pub.
func ParsePublicKey(pemText string) (*ecdsa.PublicKey, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errors.New("not a PEM PUBLIC KEY block")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	ek, ok := k.(*ecdsa.PublicKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, errors.New("not an ECDSA P-256 public key (cosign's key pairs are)")
	}
	return ek, nil
}

// signedPayload is the part of a simple signing payload that is checked.
type signedPayload struct {
	Critical struct {
		Image struct {
			Digest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
}

// VerifyCosign checks that a cosign signature of digest in url verifies
// with key. It checks the signature only: no transparency log, no
// certificate (keyless signatures are not supported).
func (c *Client) VerifyCosign(ctx context.Context, url, digest string, key *ecdsa.PublicKey, cr Credentials) error {
	repo, err := c.repository(url, cr)
	if err != nil {
		return err
	}
	tag := strings.Replace(digest, ":", "-", 1) + ".sig"
	desc, rc, err := repo.FetchReference(ctx, tag)
	if errors.Is(err, errdef.ErrNotFound) {
		return fmt.Errorf("%s@%s: %w (no tag %s)", url, digest, ErrNoSignature, tag)
	}
	if err != nil {
		return fmt.Errorf("%s:%s: %w", url, tag, err)
	}
	defer rc.Close()
	if desc.Size > maxPayload {
		return fmt.Errorf("%s:%s: the signature manifest is %d bytes", url, tag, desc.Size)
	}
	data, err := content.ReadAll(rc, desc)
	if err != nil {
		return fmt.Errorf("%s:%s: %w", url, tag, err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s:%s: not an image manifest: %w", url, tag, err)
	}
	for i, l := range m.Layers {
		if i == maxSignatures {
			break
		}
		ok, err := verifyLayer(ctx, repo, l, digest, key)
		if err != nil {
			return fmt.Errorf("%s:%s: %w", url, tag, err)
		}
		if ok {
			return nil
		}
	}
	return fmt.Errorf("%s@%s: %w (%d signatures in %s)", url, digest, ErrBadSignature, len(m.Layers), tag)
}

// verifyLayer reports whether one signature layer signs digest with key.
func verifyLayer(ctx context.Context, repo *remote.Repository, l ocispec.Descriptor, digest string, key *ecdsa.PublicKey) (bool, error) {
	sig, err := base64.StdEncoding.DecodeString(l.Annotations[CosignSignatureAnno])
	if l.MediaType != CosignPayloadType || err != nil || len(sig) == 0 || l.Size > maxPayload {
		return false, nil
	}
	rc, err := repo.Fetch(ctx, l)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	payload, err := content.ReadAll(rc, l)
	if err != nil {
		return false, err
	}
	sum := sha256.Sum256(payload)
	if !ecdsa.VerifyASN1(key, sum[:], sig) {
		return false, nil
	}
	var p signedPayload
	if json.Unmarshal(payload, &p) != nil || p.Critical.Type != cosignType || p.Critical.Image.Digest != digest {
		return false, nil // signed, but not this artifact
	}
	return true, nil
}
