package repo

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func TestKnownHosts(t *testing.T) {
	key := func() ssh.PublicKey {
		pub, _, _ := ed25519.GenerateKey(rand.Reader)
		k, _ := ssh.NewPublicKey(pub)
		return k
	}
	good, other, revoked := key(), key(), key()
	content := "# fleet hosts\n" +
		knownhosts.Line([]string{"git.example.com"}, good) + "\n" +
		knownhosts.HashHostname("[hashed.example.com]:2222") + " " + string(ssh.MarshalAuthorizedKey(good)) +
		knownhosts.Line([]string{"*.wild.example.com", "!bad.wild.example.com"}, good) + "\n" +
		"@revoked " + knownhosts.Line([]string{"git.example.com"}, revoked) + "\n" +
		"@cert-authority *.example.com " + string(ssh.MarshalAuthorizedKey(other))
	kh, err := parseKnownHosts([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 22}
	for _, tc := range []struct {
		host string
		key  ssh.PublicKey
		ok   bool
	}{
		{"git.example.com:22", good, true},
		{"GIT.example.com:22", good, true},
		{"git.example.com:22", other, false},
		{"git.example.com:22", revoked, false},
		{"git.example.com:2222", good, false},
		{"hashed.example.com:2222", good, true},
		{"a.wild.example.com:22", good, true},
		{"bad.wild.example.com:22", good, false},
		{"unknown.example.com:22", good, false},
	} {
		err := kh.callback(tc.host, addr, tc.key)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrHostKey)) {
			t.Errorf("%s: %v, want ok=%v", tc.host, err, tc.ok)
		}
	}
	if got := kh.algorithms("git.example.com:22"); len(got) != 1 || got[0] != ssh.KeyAlgoED25519 {
		t.Errorf("algorithms = %v", got)
	}
	if _, err := parseKnownHosts([]byte("host not-a-key\n")); err == nil {
		t.Error("malformed known_hosts accepted")
	}
}

func TestCommitTrailers(t *testing.T) {
	msg := formatMessage("Update status\n\nTwo clusters changed.", []Trailer{{TrailerSourceRevision, "abc123"}, {"Signed-off-by", "x"}})
	c := Commit{Message: msg, Author: Signature{Email: "dev@example.com"}}
	if c.Trailer(TrailerSourceRevision) != "abc123" || c.Trailer("signed-off-by") != "x" || c.Trailer("Missing") != "" {
		t.Fatalf("trailers of %q", msg)
	}
	if !c.ByRegatta(Signature{}) {
		t.Error("trailer not recognised")
	}
	// A trailer-like line in the body, not the last paragraph, does not count.
	c = Commit{Message: "Regatta-Source-Revision: x\n\nbody\n", Author: Signature{Email: "bot@example.com"}}
	if c.ByRegatta(Signature{}) {
		t.Error("a body line taken for a trailer")
	}
	if !c.ByRegatta(Signature{Email: "BOT@example.com"}) {
		t.Error("configured author not recognised")
	}
}
