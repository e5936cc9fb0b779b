package oci

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/regatta-dev/regatta/internal/chartserver"
)

// TestVerifyCosign: a signature in cosign's layout verifies with its
// public key; a missing signature, one made with another key, and one of
// another digest fail with their own errors.
func TestVerifyCosign(t *testing.T) {
	reg := chartserver.NewOCI(t)
	layer := chartserver.TarGz(t, map[string]string{"cm.yaml": cm("a")})
	signed := reg.PushArtifact(t, "fleet/app", "1.0.0", "application/vnd.cncf.flux.config.v1+json", FluxContentType, layer)
	unsigned := reg.PushArtifact(t, "fleet/app", "1.1.0", "application/vnd.cncf.flux.config.v1+json", FluxContentType, chartserver.TarGz(t, map[string]string{"cm.yaml": cm("b")}))
	other := reg.PushArtifact(t, "fleet/app", "1.2.0", "application/vnd.cncf.flux.config.v1+json", FluxContentType, chartserver.TarGz(t, map[string]string{"cm.yaml": cm("c")}))
	mine, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	theirs, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	reg.SignCosign(t, "fleet/app", signed, signed, mine)
	reg.SignCosign(t, "fleet/app", other, signed, mine) // a signature of another artifact
	key, err := ParsePublicKey(chartserver.CosignPublicKey(t, mine))
	if err != nil {
		t.Fatal(err)
	}
	wrong, _ := ParsePublicKey(chartserver.CosignPublicKey(t, theirs))
	c := New(Options{PlainHTTP: true})
	url := "oci://" + reg.Host() + "/fleet/app"
	ctx := context.Background()
	if err := c.VerifyCosign(ctx, url, signed, key, Credentials{}); err != nil {
		t.Errorf("signed: %v", err)
	}
	for name, tc := range map[string]struct {
		digest string
		key    *ecdsa.PublicKey
		want   error
	}{
		"unsigned":       {unsigned, key, ErrNoSignature},
		"another key":    {signed, wrong, ErrBadSignature},
		"another digest": {other, key, ErrBadSignature},
	} {
		if err := c.VerifyCosign(ctx, url, tc.digest, tc.key, Credentials{}); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	if _, err := ParsePublicKey("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"); err == nil {
		t.Error("a broken key parsed")
	}
}
