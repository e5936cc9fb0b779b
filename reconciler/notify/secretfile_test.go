package notify

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"filippo.io/age"

	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

const hookSecret = "apiVersion: v1\nkind: Secret\nmetadata: {name: hook}\ndata: {secret: c2lnbi1tZQ==, address: aWdub3JlZA==}\nstringData: {address: \"https://hooks.example.com/T0/x\"}\n"

// TestRepoSecretFiles reads a notification's SOPS-encrypted Secret from
// the revision in force, and refuses a file in clear and a tenant's file
// its spec.decryption does not allow, however the path is written (a
// tenant's alert naming a file outside its folder is refused by
// validation: spec/testdata/invalid-tenants).
func TestRepoSecretFiles(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := age.GenerateX25519Identity()
	keys, err := sops.LoadAgeKeys([]byte(id.String()))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := sops.Encrypt("hook.yaml", []byte(hookSecret), sops.SecretRegex, []string{id.Recipient().String()})
	if err != nil {
		t.Fatal(err)
	}
	tree := fstest.MapFS{
		"notify/hook.yaml":           {Data: enc},
		"notify/clear.yaml":          {Data: []byte(hookSecret)},
		"tenants/team/hook.yaml":     {Data: enc},
		"tenants/open/hook.yaml":     {Data: enc},
		"tenants/team/not-yaml.yaml": {Data: []byte("x")},
	}
	team := &spec.Tenant{}
	team.Metadata.Name = "team"
	team.Spec.Decryption = &spec.Decryption{AgeRecipients: []string{other.Recipient().String()}}
	open := &spec.Tenant{}
	open.Metadata.Name = "open"
	repo := &spec.Repository{Tenants: []*spec.Tenant{team, open}}
	files := RepoSecretFiles{Keys: keys, InForce: func() (fs.FS, *spec.Repository) { return tree, repo }}

	for _, file := range []string{"notify/hook.yaml", "tenants/open/hook.yaml"} {
		got, err := files.SecretFile(context.Background(), file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if string(got["address"]) != "https://hooks.example.com/T0/x" || string(got["secret"]) != "sign-me" || len(got) != 2 {
			t.Errorf("%s: keys %v, want stringData's address over data's and data's secret", file, got)
		}
	}
	for file, want := range map[string]string{
		"notify/clear.yaml":                "notify/clear.yaml is not SOPS-encrypted",
		"tenants/team/hook.yaml":           "tenants/team/hook.yaml",
		"notify/../tenants/team/hook.yaml": "not encrypted to a key",
		"notify/missing.yaml":              "notify/missing.yaml",
	} {
		_, err := files.SecretFile(context.Background(), file)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one naming %q", file, err, want)
		}
		t.Logf("%s: %v", file, err)
		if err != nil && strings.Contains(err.Error(), "T0/x") {
			t.Errorf("%s: the error shows a value: %v", file, err)
		}
	}
	if _, err := (RepoSecretFiles{Keys: keys, InForce: func() (fs.FS, *spec.Repository) { return nil, nil }}).SecretFile(context.Background(), "notify/hook.yaml"); err == nil {
		t.Error("a secret file was read before any revision was in force")
	}
	if _, err := (RepoSecretFiles{InForce: files.InForce}).SecretFile(context.Background(), "notify/hook.yaml"); err == nil || !strings.Contains(err.Error(), "--sops-age-key-file") {
		t.Errorf("without keys: %v", err)
	}
}
