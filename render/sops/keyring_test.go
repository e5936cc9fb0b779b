package sops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadAgeKeys(t *testing.T) {
	k := keyring(t, "age.key", "other.key")
	if got := k.Recipients(); len(got) != 2 || !strings.HasPrefix(got[0], "age1") || got[0] == got[1] {
		t.Errorf("recipients %v", got)
	}
	file, err := LoadAgeKeyFile(filepath.Join("testdata", "age.key"))
	if err != nil || file.Recipients()[0] != k.Recipients()[0] {
		t.Errorf("LoadAgeKeyFile: %v %v", file, err)
	}
}

func TestLoadAgeKeysErrors(t *testing.T) {
	secretish := "AGE-SECRET-KEY-1NOTAVALIDKEYATALL"
	cases := map[string]struct{ in, msg string }{
		"empty":    {"# only a comment\n\n", "age identities: no AGE-SECRET-KEY-1 line found"},
		"bad line": {"# c\n" + secretish + "\n", "age identities: line 2: not an age secret key (want AGE-SECRET-KEY-1...)"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := LoadAgeKeys([]byte(c.in))
			if err == nil || err.Error() != c.msg {
				t.Fatalf("got %v, want %s", err, c.msg)
			}
			if strings.Contains(err.Error(), secretish) {
				t.Error("error echoes key material")
			}
		})
	}
	if _, err := LoadAgeKeyFile(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}
