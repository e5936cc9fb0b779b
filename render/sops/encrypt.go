package sops

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"
)

// SecretRegex encrypts the values of a Kubernetes Secret and leaves its
// metadata readable, as `sops --encrypted-regex '^(data|stringData)$'` does.
const SecretRegex = "^(data|stringData)$"

// sopsVersion is the sops format version written into encrypted files.
const sopsVersion = "3.13.3"

// Encrypt encrypts a YAML or JSON document (by file extension) to the given
// age recipients in sops' format, so that sops itself can decrypt it.
// encryptedRegex limits which keys are encrypted (empty: all but keys
// ending in _unencrypted, sops' default). Comments are not kept. It exists
// so tests and `make demo` can produce encrypted files without the sops
// CLI; operators use sops itself.
func Encrypt(file string, plain []byte, encryptedRegex string, recipients []string) ([]byte, error) {
	out, err := encrypt(isJSON(file), plain, encryptedRegex, recipients, time.Now())
	if err != nil {
		return nil, fmt.Errorf("%s: sops: %w", file, err)
	}
	return out, nil
}

func encrypt(asJSON bool, plain []byte, encryptedRegex string, recipients []string, now time.Time) ([]byte, error) {
	parse, emit := parseYAML, emitYAML
	if asJSON {
		parse, emit = parseJSON, emitJSON
	}
	docs, err := parse(plain)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no document to encrypt")
	}
	m := &metadata{EncryptedRegex: encryptedRegex, Version: sopsVersion,
		LastModified: now.UTC().Format(time.RFC3339)}
	if encryptedRegex == "" {
		m.UnencryptedSuffix = "_unencrypted"
	}
	if err := sealTree(docs, m, recipients); err != nil {
		return nil, err
	}
	docs[0].keys = append(docs[0].keys, "sops")
	docs[0].items = append(docs[0].items, m.node())
	return emit(docs)
}

// sealTree encrypts the documents with a new data key, wraps the key for
// each recipient and seals the MAC.
func sealTree(docs []*node, m *metadata, recipients []string) error {
	if len(recipients) == 0 {
		return fmt.Errorf("no recipients")
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	for _, r := range recipients {
		enc, err := wrapKey(key, r)
		if err != nil {
			return err
		}
		m.Age = append(m.Age, ageKey{Recipient: r, Enc: enc})
	}
	mac, err := encryptTree(docs, m, key)
	if err != nil {
		return err
	}
	m.MAC, err = encryptValue(mac, key, m.LastModified)
	return err
}

// wrapKey encrypts the data key to one age recipient, armored as sops does.
func wrapKey(key []byte, recipient string) (string, error) {
	r, err := age.ParseX25519Recipient(recipient)
	if err != nil {
		return "", fmt.Errorf("recipient %s: not an age public key", abbreviate(recipient))
	}
	var b bytes.Buffer
	aw := armor.NewWriter(&b)
	w, err := age.Encrypt(aw, r)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(w, bytes.NewReader(key)); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	if err := aw.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// node renders the metadata as the `sops` mapping.
func (m *metadata) node() *node {
	n := &node{kind: mappingNode}
	add := func(k string, v *node) {
		n.keys = append(n.keys, k)
		n.items = append(n.items, v)
	}
	ages := &node{kind: sequenceNode}
	for _, k := range m.Age {
		ages.items = append(ages.items, &node{kind: mappingNode, keys: []string{"recipient", "enc"},
			items: []*node{{value: k.Recipient}, {value: k.Enc}}})
	}
	add("age", ages)
	add("lastmodified", &node{value: m.LastModified})
	add("mac", &node{value: m.MAC})
	if m.EncryptedRegex != "" {
		add("encrypted_regex", &node{value: m.EncryptedRegex})
	}
	if m.UnencryptedSuffix != "" {
		add("unencrypted_suffix", &node{value: m.UnencryptedSuffix})
	}
	add("version", &node{value: m.Version})
	return n
}
