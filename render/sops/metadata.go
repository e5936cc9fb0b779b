package sops

import (
	"errors"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// metadata is the part of a file's `sops` mapping that age decryption
// needs, with sops' field names.
type metadata struct {
	ShamirThreshold         int        `yaml:"shamir_threshold"`
	KeyGroups               []keyGroup `yaml:"key_groups"`
	keyGroup                `yaml:",inline"`
	LastModified            string `yaml:"lastmodified"`
	MAC                     string `yaml:"mac"`
	UnencryptedSuffix       string `yaml:"unencrypted_suffix"`
	EncryptedSuffix         string `yaml:"encrypted_suffix"`
	UnencryptedRegex        string `yaml:"unencrypted_regex"`
	EncryptedRegex          string `yaml:"encrypted_regex"`
	UnencryptedCommentRegex string `yaml:"unencrypted_comment_regex"`
	EncryptedCommentRegex   string `yaml:"encrypted_comment_regex"`
	MACOnlyEncrypted        bool   `yaml:"mac_only_encrypted"`
	Version                 string `yaml:"version"`

	lastModified time.Time
}

// keyGroup holds age keys; other key types are only counted.
type keyGroup struct {
	Age   []ageKey `yaml:"age"`
	PGP   []any    `yaml:"pgp"`
	KMS   []any    `yaml:"kms"`
	GCP   []any    `yaml:"gcp_kms"`
	HCKMS []any    `yaml:"hckms"`
	Azure []any    `yaml:"azure_kv"`
	Vault []any    `yaml:"hc_vault"`
}

type ageKey struct {
	Recipient string `yaml:"recipient"`
	Enc       string `yaml:"enc"`
}

func (g keyGroup) others() int {
	return len(g.PGP) + len(g.KMS) + len(g.GCP) + len(g.HCKMS) + len(g.Azure) + len(g.Vault)
}

func (g keyGroup) empty() bool { return len(g.Age)+g.others() == 0 }

// extractMetadata removes the top-level `sops` key from every document and
// parses the first document's, as sops does.
func extractMetadata(docs []*node) (*metadata, error) {
	var raw *node
	for i, d := range docs {
		for k := 0; k < len(d.keys); k++ {
			if d.keys[k] != "sops" {
				continue
			}
			if i == 0 && raw == nil {
				raw = d.items[k]
			}
			d.keys = append(d.keys[:k], d.keys[k+1:]...)
			d.items = append(d.items[:k], d.items[k+1:]...)
			k--
		}
	}
	if raw == nil || raw.kind != mappingNode {
		return nil, ErrNotEncrypted
	}
	return parseMetadata(raw)
}

func parseMetadata(raw *node) (*metadata, error) {
	data, err := yaml.Marshal(toPlain(raw))
	if err != nil {
		return nil, err
	}
	var m metadata
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("sops metadata: %w", err)
	}
	if m.lastModified, err = time.Parse(time.RFC3339, m.LastModified); err != nil {
		return nil, errors.New("sops metadata: lastmodified is not an RFC 3339 time")
	}
	if err := m.defaultRules(); err != nil {
		return nil, err
	}
	if m.EncryptedCommentRegex != "" || m.UnencryptedCommentRegex != "" {
		return nil, errors.New("files using encrypted_comment_regex or unencrypted_comment_regex are not supported")
	}
	return &m, nil
}

// defaultRules applies sops' rule: at most one encryption rule, and
// unencrypted_suffix "_unencrypted" when none is given.
func (m *metadata) defaultRules() error {
	n := 0
	for _, r := range []string{m.UnencryptedSuffix, m.EncryptedSuffix, m.UnencryptedRegex,
		m.EncryptedRegex, m.UnencryptedCommentRegex, m.EncryptedCommentRegex} {
		if r != "" {
			n++
		}
	}
	if n > 1 {
		return errors.New("sops metadata: more than one encryption rule")
	}
	if n == 0 {
		m.UnencryptedSuffix = "_unencrypted"
	}
	return nil
}

// groups returns the key groups: the top-level keys form one group, else
// key_groups.
func (m *metadata) groups() []keyGroup {
	if !m.keyGroup.empty() {
		return []keyGroup{m.keyGroup}
	}
	return m.KeyGroups
}

// toPlain converts a tree back to plain Go values (for the metadata only).
func toPlain(n *node) any {
	switch n.kind {
	case mappingNode:
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			m[k] = toPlain(n.items[i])
		}
		return m
	case sequenceNode:
		s := make([]any, len(n.items))
		for i, it := range n.items {
			s[i] = toPlain(it)
		}
		return s
	default:
		return n.value
	}
}
