package render

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

const sopsFixtures = "sops/testdata/"

func sopsFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(sopsFixtures + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func testKeyring(t testing.TB, file string) *sops.Keyring {
	t.Helper()
	k, err := sops.LoadAgeKeyFile(sopsFixtures + file)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// sopsRepo is the test repository plus encrypted manifests, a kustomize
// folder over an encrypted Secret and an encrypted values file.
func sopsRepo(t testing.TB) fstest.MapFS {
	fsys := memRepo(t)
	for p, f := range map[string]string{
		"addons/secrets/secret.yaml":           "secret.enc.yaml",
		"addons/wrongkey/secret.yaml":          "wrongkey.enc.yaml",
		"addons/tampered/secret.yaml":          "tampered.enc.yaml",
		"addons/secrets-kustomize/secret.yaml": "secret.enc.yaml",
		"values/secret-values.json":            "config.enc.json",
	} {
		fsys[p] = &fstest.MapFile{Data: sopsFixture(t, f)}
	}
	fsys["addons/secrets-kustomize/kustomization.yaml"] = &fstest.MapFile{Data: []byte("resources: [secret.yaml]\nnamespace: moved\n")}
	return fsys
}

func sopsProfile(t testing.TB, fsys fstest.MapFS, a spec.Addon) *spec.Profile {
	return withSource(loadProfile(t, fsys, "plain"), a)
}

func TestSOPSDecryptsManifestsAndKustomize(t *testing.T) {
	fsys := sopsRepo(t)
	r := New(Options{Keys: testKeyring(t, "age.key")})
	for _, a := range []spec.Addon{
		{Name: "s", Manifests: &spec.ManifestsSource{Path: "addons/secrets"}},
		{Name: "s", Kustomize: &spec.KustomizeSource{Path: "addons/secrets-kustomize"}},
	} {
		res, err := r.Render(context.Background(), Request{FS: fsys, Profile: sopsProfile(t, fsys, a), Cluster: prodCluster()})
		if err != nil {
			t.Fatal(err)
		}
		objs := res.Objects()
		if len(objs) != 1 {
			t.Fatalf("%d objects, want 1", len(objs))
		}
		o := objs[0]
		if pw, _, _ := unstructuredString(o.Object, "stringData", "password"); pw != "correct-horse-battery-staple" {
			t.Errorf("password not decrypted")
		}
		if _, ok := o.Object["sops"]; ok {
			t.Errorf("sops metadata left in the object")
		}
		if a.Kustomize != nil && o.GetNamespace() != "moved" {
			t.Errorf("namespace %q, want kustomize's moved", o.GetNamespace())
		}
	}
}

func TestSOPSFailuresNameTheFile(t *testing.T) {
	fsys := sopsRepo(t)
	main := testKeyring(t, "age.key")
	other := testKeyring(t, "other.key").Recipients()
	noAge, err := sops.New(sops.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		keys       *sops.Keyring
		dir        string
		recipients []string
		want       string
		is         error
	}{
		{"wrong key", main, "addons/wrongkey", nil, "addons/wrongkey/secret.yaml: sops: no key can decrypt the data key: age key age1ec2c2l5l…: no identity for this recipient", sops.ErrNoKey},
		{"cluster restricted", main, "addons/secrets", other, "addons/secrets/secret.yaml: sops: not encrypted to a key this cluster may use (spec.decryption); keys in file: age key age1qdtmz3rs…", sops.ErrNotAllowed},
		{"tampered", main, "addons/tampered", nil, "addons/tampered/secret.yaml: sops: integrity check failed", sops.ErrIntegrity},
		{"no age key", noAge, "addons/secrets", nil, "addons/secrets/secret.yaml: sops: no key can decrypt the data key: age key age1qdtmz3rs…: no age key is configured", sops.ErrNoKey},
		{"no keyring", nil, "addons/secrets", nil, "addons/secrets/secret.yaml: file is encrypted with SOPS but no SOPS keys are configured", ErrNoKeyring},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prof := sopsProfile(t, fsys, spec.Addon{Name: "s", Manifests: &spec.ManifestsSource{Path: c.dir}})
			cl := prodCluster()
			cl.Decryption = &spec.Decryption{AgeRecipients: c.recipients}
			_, err := New(Options{Keys: c.keys}).Render(context.Background(), Request{FS: fsys, Profile: prof, Cluster: cl})
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, c.is) {
				t.Errorf("error %v, want %q and errors.Is %v", err, c.want, c.is)
			}
			if err != nil && strings.Contains(err.Error(), "correct-horse") {
				t.Errorf("plaintext in error: %v", err)
			}
		})
	}
}

// TestSOPSRecipientsEnterTheKey: clusters allowed different keys never
// share a render of an add-on that reads SOPS files.
func TestSOPSRecipientsEnterTheKey(t *testing.T) {
	fsys := sopsRepo(t)
	keys := testKeyring(t, "age.key")
	prof := sopsProfile(t, fsys, spec.Addon{Name: "s", Manifests: &spec.ManifestsSource{Path: "addons/secrets"}})
	r := New(Options{Keys: keys})
	allowed := prodCluster()
	allowed.Decryption = &spec.Decryption{AgeRecipients: keys.Recipients()}
	if _, err := r.Render(context.Background(), Request{FS: fsys, Revision: "r", Profile: prof, Cluster: allowed}); err != nil {
		t.Fatal(err)
	}
	denied := prodCluster()
	denied.Decryption = &spec.Decryption{AgeRecipients: testKeyring(t, "other.key").Recipients()}
	if _, err := r.Render(context.Background(), Request{FS: fsys, Revision: "r", Profile: prof, Cluster: denied}); !errors.Is(err, sops.ErrNoKey) {
		t.Errorf("a cluster restricted to another key got the cached secret: %v", err)
	}
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	cur := any(obj)
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

func TestSOPSValuesFile(t *testing.T) {
	fsys := sopsRepo(t)
	prof := sopsProfile(t, fsys, spec.Addon{Name: "demo", Helm: &spec.HelmSource{
		Path: "charts/demo", ReleaseName: "demo", ReleaseNamespace: "demo",
		ValuesFiles: []string{"values/secret-values.json"},
	}})
	r := New(Options{Keys: testKeyring(t, "age.key"), Helm: helmRenderer(t)})
	res, err := r.Render(context.Background(), Request{FS: fsys, Profile: prof, Cluster: prodCluster()})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Objects() {
		if o.GetKind() == "ConfigMap" && o.GetName() == "demo-settings" {
			if u, _, _ := unstructuredString(o.Object, "data", "db-user"); u != "app" {
				t.Errorf("db-user %q, want app from the encrypted values file", u)
			}
			return
		}
	}
	t.Errorf("no demo-settings ConfigMap")
}
