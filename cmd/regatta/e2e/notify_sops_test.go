package e2e

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/render/sops/sopstest"
)

// TestNotifySecretFileEncryptedWithSOPS: the webhook's address and HMAC
// key come from notify/hook.yaml, a Secret manifest the sops CLI
// encrypted to the daemon's age key. The failure's message is signed
// with its key; a commit that fixes the profile and rotates the key in
// the file has the resolution signed with the new key, read from the
// revision in force at the send.
func TestNotifySecretFileEncryptedWithSOPS(t *testing.T) {
	e := startNotifyEnv(t, "c0")
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(e.dir, "age.key")
	if err := os.WriteFile(keyFile, []byte(id.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	hookFile := func(key string) string {
		plain := "apiVersion: v1\nkind: Secret\nmetadata: {name: ops-hook}\nstringData:\n  address: " + e.inbox.URL + "/hook\n  secret: " + key + "\n"
		if err := os.WriteFile(filepath.Join(work, "hook.yaml"), []byte(plain), 0o600); err != nil {
			t.Fatal(err)
		}
		return string(sopstest.Sops(t, work, nil, nil, "encrypt", "--encrypted-regex", sops.SecretRegex, "--age", id.Recipient().String(), "hook.yaml"))
	}
	notification := "{name: chat, type: webhook, secretFile: notify/hook.yaml}"
	files := notifyClusters(map[string]string{"c0": ""})
	maps.Copy(files, cmProfile("web", "missing", "v1", ""))
	maps.Copy(files, alertFile("Failed", notification))
	files["notify/hook.yaml"] = hookFile("first-key")
	e.inbox.set(false, []byte("first-key"))
	e.repo.commit(t, "web broken; the webhook's credentials encrypted with sops", files)
	startRegatta(t, "regatta-sops-notify", logDirOr(e.dir), e.args(t, "--leader-elect=false", "--sops-age-key-file", keyFile)...)
	testenv.WaitFor(t, 60*time.Second, "the failure's message, signed with the first key", func() bool { return len(e.inbox.messages()) > 0 })
	if m := e.inbox.messages(); len(m) != 1 || m[0]["kind"] != "Failed" || m[0]["resolved"] != false || e.inbox.requestCount() != 1 {
		t.Fatalf("%d requests, messages %v; want one message of web failing", e.inbox.requestCount(), m)
	}

	e.inbox.set(false, []byte("second-key"))
	fixed := cmProfile("web", "notify-web", "v2", "")
	fixed["notify/hook.yaml"] = hookFile("second-key")
	e.repo.commit(t, "web fixed; the webhook's key rotated", fixed)
	testenv.WaitFor(t, 60*time.Second, "the resolution, signed with the second key", func() bool { return len(e.inbox.messages()) > 1 })
	if m := e.inbox.messages(); len(m) != 2 || m[1]["resolved"] != true || e.inbox.requestCount() != 2 {
		t.Fatalf("%d requests, messages %v; want the failure and its resolution, each accepted at once", e.inbox.requestCount(), m)
	}
}
