package sops

import "testing"

func TestIsEncrypted(t *testing.T) {
	cases := map[string]struct {
		data []byte
		want bool
	}{
		"yaml fixture":     {read(t, "secret.enc.yaml"), true},
		"json fixture":     {read(t, "config.enc.json"), true},
		"plain yaml":       {read(t, "plain/secret.yaml"), false},
		"plain json":       {read(t, "plain/config.json"), false},
		"sops not a map":   {[]byte("sops: mac\n"), false},
		"no mac":           {[]byte("sops:\n  version: 3.9.0\n  lastmodified: x\n"), false},
		"mac and version":  {[]byte("a: 1\nsops:\n  mac: x\n  version: 3.9.0\n"), true},
		"nested sops":      {[]byte("a:\n  sops:\n    mac: x\n    version: 1\n"), false},
		"second document":  {[]byte("a: 1\n---\nsops:\n  mac: x\n  version: 1\n"), false},
		"garbage":          {[]byte("sops: mac: [\x00"), false},
		"empty":            {nil, false},
		"json sops string": {[]byte(`{"sops": "mac lastmodified"}`), false},
	}
	for name, c := range cases {
		if got := IsEncrypted(c.data); got != c.want {
			t.Errorf("%s: IsEncrypted = %v, want %v", name, got, c.want)
		}
	}
}
