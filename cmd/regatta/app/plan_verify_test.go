package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/testenv/signing"
)

const signersPolicy = `apiVersion: regatta.dev/v1alpha1
kind: SignersPolicy
groups:
  platform: [platform@example.com]
  web-team: [web@example.com]
rules:
- paths: ["web/**"]
  signers: [web-team, platform]
- paths: ["**"]
  signers: [platform]
`

// TestPlanVerifyCommits: plan --verify-commits says whether the daemon,
// having verified base, would let head in and by which key; a signer
// changing a path the policy does not give it fails the plan (exit 1),
// naming the file.
func TestPlanVerifyCommits(t *testing.T) {
	platform := signing.NewSSHKey(t, "platform")
	web := signing.NewSSHKey(t, "web")
	dir, keys := t.TempDir(), t.TempDir()
	policy := filepath.Join(keys, "policy.yaml")
	for name, content := range map[string]string{
		filepath.Join(keys, "allowed_signers"): platform.AllowedSigner("platform@example.com", "") + web.AllowedSigner("web@example.com", ""),
		policy:                                 signersPolicy,
	} {
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyFleet(t, dir)
	writeSOPS(t, dir, sopsBase)
	signing.Git(t, dir, signing.Unsigned, "init", "-q", "-b", "main")
	signing.Commit(t, dir, platform.Signer(), "fleet", nil)
	args := []string{"plan", "--base", "HEAD~1", "--sops-age-key-file", planAgeKey, "--verify-commits", "every",
		"--trusted-keys", keys, "--signers-policy", policy, dir}

	overlay := "web/overlays/prod/kustomization.yaml"
	signing.Commit(t, dir, web.Signer(), "web team's change", map[string]string{
		overlay: strings.Replace(readFleet(overlay), "value: 3", "value: 4", 1)})
	code, stdout, stderr := run(t, args...)
	if code != 2 || !strings.Contains(stdout, "signature check (every): accepted, signed by SHA256:") || !strings.Contains(stdout, "(web@example.com)") {
		t.Fatalf("web team's change: exit %d\n%s%s", code, stdout, stderr)
	}
	signing.Commit(t, dir, web.Signer(), "web team on a platform file", map[string]string{
		"profiles/web.yaml": readFleet("profiles/web.yaml") + "# reworded\n"})
	code, stdout, stderr = run(t, args...)
	if code != 1 || !strings.Contains(stdout, "REFUSED") || !strings.Contains(stdout, "SignerNotAllowed at profiles/web.yaml") {
		t.Fatalf("web team on a platform file: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestValidateSignersPolicy: validate --signers-policy reports the
// policy's errors with file and line (exit 1) and warns of globs no file
// of the repository matches.
func TestValidateSignersPolicy(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	bad := strings.Replace(signersPolicy, "signers: [platform]\n", "signers: [plattform]\n", 1)
	if err := os.WriteFile(policy, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := run(t, "validate", "--signers-policy", policy, specTestdata+"valid-full")
	if code != 1 || !strings.Contains(stdout, policy+`:9: rules[1].signers[0]: group "plattform" is not defined under groups`) {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	if err := os.WriteFile(policy, []byte(signersPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = run(t, "validate", "--signers-policy", policy, specTestdata+"valid-full")
	if code != 0 || !strings.Contains(stdout, `warning: `+policy+`:7: rules[0].paths[0]: glob "web/**" matches no file of the repository`) {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
}
