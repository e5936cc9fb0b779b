package sops

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"filippo.io/age"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/keyservice"
)

// Options say where a Keyring finds its keys. The zero value decrypts
// every key type in this process with the credentials of its environment
// (see docs/operations.md), and with no age identity.
type Options struct {
	// AgeKeys is the content of age identity files (one AGE-SECRET-KEY-1...
	// per line; # comments).
	AgeKeys []byte
	// GnuPGHome is the GnuPG home holding PGP secret keys; empty: gpg's
	// own default ($GNUPGHOME, else ~/.gnupg).
	GnuPGHome string
	// GPGExec is the gpg binary; empty: "gpg" on PATH.
	GPGExec string
	// KeyServices are sops key services (tcp://host:port or
	// unix:///path), asked after the local one, in order.
	KeyServices []string
	// LocalKeyTypes are the key types decrypted in this process (the
	// KeyType* constants); nil means all of them, an empty non-nil slice
	// none (sops --enable-local-keyservice=false).
	LocalKeyTypes []string
}

// Keyring decrypts sops documents: age and PGP keys itself, the cloud key
// types through sops' own key service with the process environment's
// credentials, and any key through remote sops key services. It is
// immutable once built and safe for concurrent use; Close releases the
// connections to remote key services.
type Keyring struct {
	ages    []ageIdentity
	gpg     gpg
	local   map[string]bool
	cloud   keyservice.KeyServiceServer
	remotes []remoteService
}

type ageIdentity struct {
	id age.Identity
	// recipient is the public key (age1...), empty for plugin identities.
	recipient string
}

// New builds a Keyring. Errors name the option at fault and never hold
// key material.
func New(o Options) (*Keyring, error) {
	k := &Keyring{
		gpg:   gpg{exec: o.GPGExec, home: o.GnuPGHome},
		cloud: &keyservice.Server{},
		local: map[string]bool{},
	}
	types := o.LocalKeyTypes
	if types == nil {
		types = KeyTypes
	}
	for _, t := range types {
		if !isKeyType(t) {
			return nil, fmt.Errorf("local key types: %q is not one of %s", t, strings.Join(KeyTypes, ", "))
		}
		k.local[t] = true
	}
	if len(o.AgeKeys) > 0 {
		ids, err := parseAgeKeys(o.AgeKeys)
		if err != nil {
			return nil, err
		}
		k.ages = ids
	}
	for _, uri := range o.KeyServices {
		svc, err := dialKeyService(uri)
		if err != nil {
			k.Close()
			return nil, err
		}
		k.remotes = append(k.remotes, svc)
	}
	return k, nil
}

// Close closes the connections to remote key services.
func (k *Keyring) Close() error {
	var errs []error
	for _, r := range k.remotes {
		errs = append(errs, r.close())
	}
	return errors.Join(errs...)
}

// LoadAgeKeys returns a Keyring holding the age identities in data (the
// content of an identity file), with the defaults of Options otherwise.
func LoadAgeKeys(data []byte) (*Keyring, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("age identities: no AGE-SECRET-KEY-1 line found")
	}
	return New(Options{AgeKeys: data})
}

// LoadAgeKeyFile reads an age identity file into a new Keyring.
func LoadAgeKeyFile(path string) (*Keyring, error) {
	data, err := ReadAgeKeyFile(path)
	if err != nil {
		return nil, err
	}
	return LoadAgeKeys(data)
}

// ReadAgeKeyFile reads an age identity file and checks that it parses;
// errors name the file and the line, never the line's content.
func ReadAgeKeyFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if _, err := parseAgeKeys(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// parseAgeKeys parses identities line by line (X25519, post-quantum
// hybrid and plugin identities, as sops does).
func parseAgeKeys(data []byte) ([]ageIdentity, error) {
	var out []ageIdentity
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var parsed sopsage.ParsedIdentities
		if err := parsed.Import(line); err != nil || len(parsed) != 1 {
			return nil, fmt.Errorf("age identities: line %d: not an age secret key (want AGE-SECRET-KEY-1...)", n)
		}
		out = append(out, ageIdentity{id: parsed[0], recipient: recipientOf(parsed[0])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("age identities: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("age identities: no AGE-SECRET-KEY-1 line found")
	}
	return out, nil
}

func recipientOf(id age.Identity) string {
	switch id := id.(type) {
	case *age.X25519Identity:
		return id.Recipient().String()
	case *age.HybridIdentity:
		return id.Recipient().String()
	}
	return ""
}

// Recipients returns the public keys (age1...) of the loaded age
// identities, in file order.
func (k *Keyring) Recipients() []string {
	var out []string
	for _, a := range k.ages {
		if a.recipient != "" {
			out = append(out, a.recipient)
		}
	}
	return out
}

// Fingerprint identifies the Keyring's configuration (age recipients,
// GnuPG home, key services, local key types) for cache keys; it holds no
// secret.
func (k *Keyring) Fingerprint() string {
	parts := append([]string{"age"}, k.Recipients()...)
	parts = append(parts, "gpg", k.gpg.exec, k.gpg.home, "remote")
	for _, r := range k.remotes {
		parts = append(parts, r.uri)
	}
	parts = append(parts, "local")
	for _, t := range KeyTypes {
		if k.local[t] {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\x1f")
}
