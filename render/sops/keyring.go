package sops

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"filippo.io/age"
)

// Keyring holds age identities. It is immutable once loaded and safe for
// concurrent use.
type Keyring struct {
	identities []*age.X25519Identity
	recipients []string
}

// LoadAgeKeys parses the content of an age identity file: one
// AGE-SECRET-KEY-1... per line; blank lines and lines starting with # are
// ignored. Errors give the line number, never the line.
func LoadAgeKeys(data []byte) (*Keyring, error) {
	k := &Keyring{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, err := age.ParseX25519Identity(line)
		if err != nil {
			return nil, fmt.Errorf("age identities: line %d: not an age secret key (want AGE-SECRET-KEY-1...)", n)
		}
		k.identities = append(k.identities, id)
		k.recipients = append(k.recipients, id.Recipient().String())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("age identities: %w", err)
	}
	if len(k.identities) == 0 {
		return nil, fmt.Errorf("age identities: no AGE-SECRET-KEY-1 line found")
	}
	return k, nil
}

// LoadAgeKeyFile reads and parses an age identity file.
func LoadAgeKeyFile(path string) (*Keyring, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := LoadAgeKeys(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// Recipients returns the public keys (age1...) of the loaded identities, in
// file order.
func (k *Keyring) Recipients() []string {
	return append([]string(nil), k.recipients...)
}

// usable returns the identities allowed by allowedRecipients (all of them
// when it is empty).
func (k *Keyring) usable(allowedRecipients []string) []age.Identity {
	allowed := make(map[string]bool, len(allowedRecipients))
	for _, r := range allowedRecipients {
		allowed[strings.TrimSpace(r)] = true
	}
	var out []age.Identity
	for i, id := range k.identities {
		if len(allowed) == 0 || allowed[k.recipients[i]] {
			out = append(out, id)
		}
	}
	return out
}
