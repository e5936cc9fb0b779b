package verify_test

import (
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/internal/testenv/signing"
	"github.com/regatta-dev/regatta/verify"
)

const policyYAML = `apiVersion: regatta.dev/v1alpha1
kind: SignersPolicy
groups:
  platform: [platform@example.com]
  team-a: [team-a@example.com]
rules:
- paths: ["tenants/team-a/**"]
  signers: [team-a, platform]
- paths: ["**"]
  signers: [platform]
`

// TestSignersByPath: a tenant's key may change its tenant folder, not a
// platform file, which is named in the refusal; in every-commit mode each
// commit's own changes are held to its signer, merged branches included;
// in head mode the whole change since the base is held to the tip's.
func TestSignersByPath(t *testing.T) {
	platform := signing.NewSSHKey(t, "platform")
	team := signing.NewSSHKey(t, "team-a")
	allowed := platform.AllowedSigner("platform@example.com", "") + team.AllowedSigner("team-a@example.com", "")
	policy, err := verify.ParsePolicy("policy.yaml", []byte(policyYAML))
	if err != nil {
		t.Fatal(err)
	}
	keys := loadKeys(t, map[string][]byte{"allowed_signers": []byte(allowed)})
	every := verify.Options{Mode: verify.ModeEvery, Keys: keys, Policy: policy}
	head := verify.Options{Mode: verify.ModeHead, Keys: keys, Policy: policy}
	g := newGitRepo(t)
	base := g.commit(platform.Signer(), "base", map[string]string{"clusters/a/cluster.yaml": "x: 1\n"})
	tenant := g.commit(team.Signer(), "team-a's change", map[string]string{"tenants/team-a/app.yaml": "x: 1\n"})
	wantAccepted(t, check(t, g, every, tenant, base))
	wantAccepted(t, check(t, g, head, tenant, base))

	overreach := g.commit(team.Signer(), "team-a on a platform file", map[string]string{"clusters/a/cluster.yaml": "x: 2\n"})
	v := check(t, g, every, overreach, tenant)
	wantRefused(t, v, overreach, verify.ReasonSignerNotAllowed)
	if v.File != "clusters/a/cluster.yaml" || !strings.Contains(v.Detail, "policy.yaml:9") || v.Signer != "team-a@example.com" {
		t.Fatalf("refusal names file %q signer %q detail %q", v.File, v.Signer, v.Detail)
	}
	// Head mode: a platform commit on top does not launder team-a's
	// change to a platform file in every mode; in head mode the tip's
	// signer answers for it.
	top := g.commit(platform.Signer(), "platform on top", map[string]string{"clusters/b/cluster.yaml": "x: 1\n"})
	wantRefused(t, check(t, g, every, top, tenant), overreach, verify.ReasonSignerNotAllowed)
	wantAccepted(t, check(t, g, head, top, tenant))

	// A branch by team-a touching a platform file, merged by the
	// platform: the merged commit is refused in every mode.
	g.git(signing.Unsigned, "checkout", "-q", "-b", "feature", base)
	side := g.commit(team.Signer(), "side change", map[string]string{"profiles/p.yaml": "x: 1\n"})
	g.git(signing.Unsigned, "checkout", "-q", "main")
	g.git(platform.Signer(), "merge", "-q", "-S", "--no-ff", "-m", "merge", "feature")
	merge := g.git(signing.Unsigned, "rev-parse", "HEAD")
	v = check(t, g, every, merge, top)
	wantRefused(t, v, side, verify.ReasonSignerNotAllowed)
	if v.File != "profiles/p.yaml" {
		t.Fatalf("refusal names %q", v.File)
	}
}

// TestPolicyErrors: a policy's mistakes are all reported, with file and
// line.
func TestPolicyErrors(t *testing.T) {
	bad := `apiVersion: regatta.dev/v1alpha1
kind: SignersPolicy
groups:
  platform: [platform@example.com]
rules:
- paths: ["clusters/["]
  signers: [platform]
- paths: ["**"]
  signers: [plattform]
`
	_, err := verify.ParsePolicy("policy.yaml", []byte(bad))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"policy.yaml:6: rules[0].paths[0]", `policy.yaml:8: rules[1].signers[0]: group "plattform" is not defined`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	_, err = verify.ParsePolicy("policy.yaml", []byte(policyYAML+"extra: 1\n"))
	if err == nil || !strings.Contains(err.Error(), "line 11: field extra not found") {
		t.Fatalf("unknown field: %v", err)
	}
}
