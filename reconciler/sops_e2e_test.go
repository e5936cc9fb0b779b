package reconciler

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/render/sops/sopstest"
)

// sopsFleet is a one-cluster fleet whose Secrets the sops CLI encrypted
// for the test age key and a PGP key generated here; the cluster may use
// only those two keys (spec.decryption), and the daemon decrypts with both.
type sopsFleet struct {
	f     *fleetRepo
	h     *harness
	work  string // where the sops CLI encrypts
	gpg   *sopstest.GnuPG
	age   string
	pgpFP string
}

func newSOPSFleet(t *testing.T, files map[string]string, plain map[string]string, encrypt func(s *sopsFleet, name string) []string) *sopsFleet {
	t.Helper()
	s := &sopsFleet{work: t.TempDir(), gpg: sopstest.NewGnuPG(t)}
	s.pgpFP = s.gpg.NewKey(t, "fleet")
	ageKeys, err := sops.ReadAgeKeyFile(testKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := sops.New(sops.Options{AgeKeys: ageKeys, GnuPGHome: s.gpg.Home})
	if err != nil {
		t.Fatal(err)
	}
	s.age = keys.Recipients()[0]
	for name, content := range plain {
		files[name] = string(s.encrypt(t, name, content, encrypt(s, name)...))
	}
	cluster := clusterFiles(t, "c37", "env: prod")
	cluster["clusters/c37/cluster.yaml"] += "  decryption:\n    ageRecipients: [" + s.age + "]\n    pgpFingerprints: [\"0x" + s.pgpFP + "\"]\n"
	for k, v := range cluster {
		files[k] = v
	}
	s.f = newFleetRepo(t)
	s.f.Commit("fleet", files)
	s.h = newHarness(t, s.f, func(o *DaemonOptions) { o.StatusBranch = "" })
	s.h.r.opts.Keys = keys
	s.h.r.opts.Renderer = render.New(render.Options{Keys: keys})
	return s
}

// encrypt has the sops CLI encrypt content as name with args.
func (s *sopsFleet) encrypt(t *testing.T, name, content string, args ...string) []byte {
	t.Helper()
	file := filepath.Join(s.work, filepath.Base(name))
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	args = append(append([]string{"encrypt", "--encrypted-regex", sops.SecretRegex}, args...), filepath.Base(name))
	return sopstest.Sops(t, s.work, s.gpg.Env(), nil, args...)
}

func secretYAML(name, password string) string {
	return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: default}\nstringData:\n  password: " + password + "\n"
}

func secretValue(t *testing.T, name string) string {
	t.Helper()
	sec, err := clientset(t, "c37").CoreV1().Secrets("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Secret %s: %v", name, err)
	}
	return string(sec.Data["password"])
}

// TestSOPSAgeAndPGPApply: Secrets the sops CLI encrypted with PGP, and
// with age and PGP together, are decrypted and applied to a real API
// server by the daemon; a file encrypted to a key the cluster may not use
// fails its profile naming the file, and applies nothing.
func TestSOPSAgeAndPGPApply(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{
		"profiles/sops-secrets.yaml": profileYAML("sops-secrets", "env: prod", "  addons:\n  - name: s\n    manifests: {path: sops/secrets}\n"),
		"profiles/sops-foreign.yaml": profileYAML("sops-foreign", "env: prod", "  addons:\n  - name: s\n    manifests: {path: sops/foreign}\n"),
	}
	plain := map[string]string{
		"sops/secrets/pgp.yaml":     secretYAML("sops-pgp", "pgp-secret-value"),
		"sops/secrets/age-pgp.yaml": secretYAML("sops-age-pgp", "age-pgp-secret-value"),
		"sops/foreign/other.yaml":   secretYAML("sops-foreign", "foreign-secret-value"),
	}
	var other string
	s := newSOPSFleet(t, files, plain, func(s *sopsFleet, name string) []string {
		switch filepath.Base(name) {
		case "pgp.yaml":
			return []string{"--pgp", s.pgpFP}
		case "age-pgp.yaml":
			return []string{"--age", s.age, "--pgp", s.pgpFP}
		}
		other = s.gpg.NewKey(t, "other")
		return []string{"--pgp", other}
	})
	res, _ := s.h.d.RunOnce(ctx)
	got := pairs(res, "c37")
	if p := got["sops-secrets"]; p.State != status.StateApplied {
		t.Fatalf("sops-secrets: %s %+v", p.State, p.Error)
	}
	if secretValue(t, "sops-pgp") != "pgp-secret-value" || secretValue(t, "sops-age-pgp") != "age-pgp-secret-value" {
		t.Error("the decrypted values were not applied")
	}
	p := got["sops-foreign"]
	if p.State != status.StateFailed || p.Error == nil || !strings.Contains(p.Error.File+p.Error.Message, "sops/foreign/other.yaml") ||
		!strings.Contains(p.Error.Message, "not encrypted to a key this cluster may use") || !strings.Contains(p.Error.Message, "PGP key 0x"+other) {
		t.Errorf("sops-foreign: %s %+v", p.State, p.Error)
	}
	if _, err := clientset(t, "c37").CoreV1().Secrets("default").Get(ctx, "sops-foreign", metav1.GetOptions{}); err == nil {
		t.Error("the foreign Secret was applied")
	}
}

// TestSOPSTamperedFileAppliesAndPrunesNothing: a commit that changes an
// encrypted file after encryption (MAC mismatch) and drops a ConfigMap of
// the same add-on fails the profile naming the file; the ConfigMap is not
// pruned and the Secret keeps its value.
func TestSOPSTamperedFileAppliesAndPrunesNothing(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{
		"profiles/sops-tamper.yaml": profileYAML("sops-tamper", "env: prod", "  addons:\n  - name: s\n    manifests: {path: sops/tamper}\n"),
		"sops/tamper/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sops-tamper, namespace: default}\n",
	}
	plain := map[string]string{"sops/tamper/secret.yaml": secretYAML("sops-tamper", "tamper-secret-value")}
	s := newSOPSFleet(t, files, plain, func(s *sopsFleet, _ string) []string { return []string{"--age", s.age, "--pgp", s.pgpFP} })
	res, _ := s.h.d.RunOnce(ctx)
	if p := pairs(res, "c37")["sops-tamper"]; p.State != status.StateApplied {
		t.Fatalf("first pass: %s %+v", p.State, p.Error)
	}
	tampered := strings.Replace(files["sops/tamper/secret.yaml"], "name: sops-tamper", "name: sops-tampered", 1)
	if tampered == files["sops/tamper/secret.yaml"] {
		t.Fatal("nothing tampered")
	}
	if err := os.Remove(filepath.Join(s.f.Work, "sops/tamper/cm.yaml")); err != nil {
		t.Fatal(err)
	}
	s.f.Commit("tamper", map[string]string{"sops/tamper/secret.yaml": tampered})
	res, _ = s.h.d.RunOnce(ctx)
	p := pairs(res, "c37")["sops-tamper"]
	if p.State != status.StateFailed || p.Error == nil || !strings.Contains(p.Error.File+p.Error.Message, "sops/tamper/secret.yaml") ||
		!strings.Contains(p.Error.Message, "MAC mismatch") {
		t.Fatalf("second pass: %s %+v", p.State, p.Error)
	}
	if strings.Contains(p.Error.Message, "tamper-secret-value") {
		t.Error("the error holds plaintext")
	}
	if p.Objects != 2 {
		t.Errorf("the failed pair says objects: %d, while its inventory holds its 2 objects", p.Objects)
	}
	if configMap(t, "c37", "default", "sops-tamper") == nil {
		t.Error("the ConfigMap was pruned by a failed render")
	}
	if secretValue(t, "sops-tamper") != "tamper-secret-value" {
		t.Error("the Secret changed")
	}
	if _, err := clientset(t, "c37").CoreV1().Secrets("default").Get(ctx, "sops-tampered", metav1.GetOptions{}); err == nil {
		t.Error("the tampered Secret was applied")
	}
}
