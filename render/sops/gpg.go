package sops

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/regatta-dev/regatta/spec"
)

// gpg decrypts PGP-wrapped data keys with the gpg binary. sops' pgp
// keysource does too, but it cannot say which secret key decrypted, which
// a restricted cluster needs: gpg uses any secret key of the keyring
// whatever fingerprint the file's metadata names. Here gpg's status
// output (DECRYPTION_KEY) names the key, and it must be one the cluster
// may use.
type gpg struct {
	exec string
	home string
}

// gpgStatus is what gpg's --status-fd output says about a decryption.
type gpgStatus struct {
	// decryptedBy are the fingerprints of the key that decrypted: the
	// (sub)key and its primary key.
	decryptedBy []string
	noSecKey    []string
	messages    []string
}

func (g gpg) decrypt(ctx context.Context, fingerprint string, ciphertext []byte, allowed *spec.Decryption) ([]byte, error) {
	bin := g.exec
	if bin == "" {
		bin = "gpg"
	}
	args := []string{"--batch", "--no-tty", "--quiet", "--status-fd", "2", "--decrypt"}
	if g.home != "" {
		args = append([]string{"--homedir", g.home}, args...)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = bytes.NewReader(ciphertext)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	st := parseGPGStatus(stderr.Bytes())
	if err != nil {
		return nil, g.explain(err, fingerprint, st)
	}
	if !allowed.IsEmpty() && !slices.ContainsFunc(st.decryptedBy, func(fp string) bool {
		return isAllowed(allowed, Key{KeyTypePGP, fp})
	}) {
		return nil, fmt.Errorf("gpg decrypted with key %s, which spec.decryption does not list", strings.Join(st.decryptedBy, "/"))
	}
	return stdout.Bytes(), nil
}

// explain turns a failed gpg run into what is missing.
func (g gpg) explain(err error, fingerprint string, st gpgStatus) error {
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("gpg not found (PGP keys need GnuPG on PATH, or SOPS_GPG_EXEC)")
	}
	if len(st.noSecKey) > 0 || slices.ContainsFunc(st.messages, func(m string) bool { return strings.Contains(m, "No secret key") }) {
		home := g.home
		if home == "" {
			home = "the default GnuPG home ($GNUPGHOME or ~/.gnupg)"
		}
		return fmt.Errorf("PGP key 0x%s not in the keyring (%s)", fingerprint, home)
	}
	msg := strings.Join(st.messages, "; ")
	if msg == "" {
		msg = err.Error()
	}
	return fmt.Errorf("gpg failed: %s", msg)
}

// parseGPGStatus reads gpg's stderr: [GNUPG:] status lines and gpg:
// messages (neither holds plaintext, which goes to stdout).
func parseGPGStatus(stderr []byte) gpgStatus {
	var st gpgStatus
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "[GNUPG:]" && f[1] == "DECRYPTION_KEY":
			st.decryptedBy = append(st.decryptedBy, f[2:min(len(f), 4)]...)
		case len(f) >= 3 && f[0] == "[GNUPG:]" && f[1] == "NO_SECKEY":
			st.noSecKey = append(st.noSecKey, f[2])
		case strings.HasPrefix(line, "gpg: "):
			st.messages = append(st.messages, strings.TrimPrefix(line, "gpg: "))
		}
	}
	return st
}
