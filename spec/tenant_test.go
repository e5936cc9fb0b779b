package spec

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"
)

func TestTenantProfileMatchesOnlyTenantClusters(t *testing.T) {
	repo, diags := loadDir(t, "../examples/tenants")
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	p := repo.Profile("team-a-web")
	if p == nil || p.Tenant() == nil || p.Tenant().Name() != "team-a" || p.Root() != "tenants/team-a" {
		t.Fatalf("team-a-web not bound to team-a: %+v", p)
	}
	for name, want := range map[string]bool{"east": true, "west": true, "north": false} {
		c := repo.Cluster(name)
		if got := p.Matches(name, c.Metadata.Labels); got != want {
			t.Errorf("team-a-web matches %s = %v, want %v", name, got, want)
		}
	}
	if repo.Profile("platform").Root() != "" {
		t.Error("a platform profile is confined")
	}
	if sa := repo.Tenant("team-b").Spec.ServiceAccount; sa.Username() != "system:serviceaccount:regatta-system:deployer" || !sa.Creates() {
		t.Errorf("team-b service account %+v", sa)
	}
}

func TestConfinedResolvePath(t *testing.T) {
	fsys := fstest.MapFS{
		"tenants/a/app/cm.yaml":  {Data: []byte("x")},
		"tenants/a/up":           {Data: []byte("../.."), Mode: fs.ModeSymlink},
		"tenants/a/in":           {Data: []byte("app"), Mode: fs.ModeSymlink},
		"tenants/b/secret.yaml":  {Data: []byte("x")},
		"tenants/ab/secret.yaml": {Data: []byte("x")},
	}
	c := Confine(fsys, "tenants/a")
	for p, wantErr := range map[string]bool{
		"tenants/a/app/cm.yaml":      false,
		"tenants/a":                  false,
		"tenants/b/secret.yaml":      true,
		"tenants/ab/secret.yaml":     true,
		"tenants/a/../b/secret.yaml": true,
		"/tenants/a/app/cm.yaml":     true,
		"../x":                       true,
		"other":                      true,
		"tenants/a/in/cm.yaml":       false,
		"tenants/a/up/b/secret.yaml": true,
		"tenants/a/up":               true,
	} {
		_, err := ResolvePath(c, p)
		if (err != nil) != wantErr {
			t.Errorf("%s: err %v, want error %v", p, err, wantErr)
		}
		if err != nil && !errors.Is(err, ErrPathEscapes) {
			t.Errorf("%s: %v is not ErrPathEscapes", p, err)
		}
	}
	if _, err := ResolvePath(Confine(fsys, ""), "tenants/b/secret.yaml"); err != nil {
		t.Error("an empty root confines")
	}
}
