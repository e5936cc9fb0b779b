package flux

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/render/sops/sopstest"
)

// TestImportCarriesSOPSDecryption: a Flux repository whose Secrets the
// sops CLI encrypted for age and PGP (per .sops.yaml) imports with the
// Kustomization's decryption and its secretRef reported, the key types
// the fleet needs reported, and the cluster's spec.decryption listing the
// keys its files are encrypted to.
func TestImportCarriesSOPSDecryption(t *testing.T) {
	dir := t.TempDir()
	g := sopstest.NewGnuPG(t)
	fp := g.NewKey(t, "fleet")
	keys, err := sops.LoadAgeKeyFile("../../render/sops/testdata/age.key")
	if err != nil {
		t.Fatal(err)
	}
	age := keys.Recipients()[0]
	files := map[string]string{
		".sops.yaml": "creation_rules:\n- path_regex: apps/.*\\.yaml$\n  encrypted_regex: ^(data|stringData)$\n  age: " + age + "\n  pgp: " + fp + "\n",
		"clusters/prod/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 5m
  path: ./apps
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
  decryption:
    provider: sops
    secretRef: {name: sops-keys}
`,
		"apps/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: default}\nstringData: {password: import-secret}\n",
		"apps/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	enc := sopstest.Sops(t, dir, g.Env(), nil, "encrypt", "apps/secret.yaml")
	if err := os.WriteFile(filepath.Join(dir, "apps/secret.yaml"), enc, 0o644); err != nil {
		t.Fatal(err)
	}

	fleet, report, err := Import(context.Background(), os.DirFS(dir), Pull{})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, f := range report.Findings() {
		msgs = append(msgs, f.String())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"clusters/prod/apps.yaml:11: spec.decryption.secretRef: SOPS decryption carried over: give `regatta run` the keys of Secret flux-system/sops-keys",
		".sops.yaml: 1 SOPS-encrypted file; the fleet needs these key types: age (1 key), pgp (1 key)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("report lacks %q:\n%s", want, all)
		}
	}
	if len(fleet.Clusters) != 1 {
		t.Fatalf("%d clusters", len(fleet.Clusters))
	}
	d := fleet.Clusters[0].Spec.Decryption
	if d == nil || !slices.Equal(d.AgeRecipients, []string{age}) || !slices.Equal(d.PGPFingerprints, []string{fp}) {
		t.Errorf("spec.decryption = %+v, want age %s and pgp %s", d, age, fp)
	}
}
