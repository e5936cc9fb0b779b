package oci

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/chartserver"
	"github.com/regatta-dev/regatta/internal/refcli"
)

// cosignVersion is the cosign CLI the compatibility test signs with.
const cosignVersion = "v2.6.5"

// cosignCLI returns $REGATTA_COSIGN_CLI or the cosign CLI built from the
// module proxy (refcli; several minutes cold).
func cosignCLI(t *testing.T) string {
	return refcli.Path(t, "REGATTA_COSIGN_CLI", "cosign", cosignVersion, refcli.GoInstall("github.com/sigstore/cosign/v2/cmd/cosign", cosignVersion))
}

// TestCosignSignedArtifacts signs an artifact of the in-process registry
// with the cosign CLI (a key pair of `cosign generate-key-pair`, no
// transparency log) and verifies it with VerifyCosign and cosign.pub; an
// artifact cosign did not sign, and the signature checked with another
// key pair, fail.
func TestCosignSignedArtifacts(t *testing.T) {
	cli := cosignCLI(t)
	reg := chartserver.NewOCI(t)
	signed := reg.PushArtifact(t, "fleet/app", "1.0.0", "application/vnd.cncf.flux.config.v1+json", FluxContentType, chartserver.TarGz(t, map[string]string{"cm.yaml": cm("a")}))
	unsigned := reg.PushArtifact(t, "fleet/app", "1.1.0", "application/vnd.cncf.flux.config.v1+json", FluxContentType, chartserver.TarGz(t, map[string]string{"cm.yaml": cm("b")}))
	dir := t.TempDir()
	cosign := func(args ...string) {
		t.Helper()
		cmd := exec.Command(cli, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "COSIGN_PASSWORD=", "HOME="+dir, "TUF_ROOT="+filepath.Join(dir, "tuf"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cosign %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	cosign("generate-key-pair")
	if err := os.Mkdir(filepath.Join(dir, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	cosign("generate-key-pair", "--output-key-prefix", "other/cosign")
	cosign("sign", "--key", "cosign.key", "--tlog-upload=false", "--allow-insecure-registry", "--allow-http-registry", "--yes",
		reg.Host()+"/fleet/app@"+signed)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	key, err := ParsePublicKey(read("cosign.pub"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := ParsePublicKey(read("other/cosign.pub"))
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{PlainHTTP: true})
	url := "oci://" + reg.Host() + "/fleet/app"
	ctx := context.Background()
	if err := c.VerifyCosign(ctx, url, signed, key, Credentials{}); err != nil {
		t.Errorf("signed by cosign: %v", err)
	}
	if err := c.VerifyCosign(ctx, url, unsigned, key, Credentials{}); !errors.Is(err, ErrNoSignature) {
		t.Errorf("unsigned: %v", err)
	}
	if err := c.VerifyCosign(ctx, url, signed, other, Credentials{}); !errors.Is(err, ErrBadSignature) {
		t.Errorf("another key pair: %v", err)
	}
}
