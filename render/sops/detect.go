package sops

import (
	"bytes"
	"encoding/json"

	"go.yaml.in/yaml/v3"
)

// IsEncrypted reports whether data is a YAML or JSON document whose first
// document has a top-level `sops` mapping holding `mac` and `lastmodified`
// or `version`. It never panics and never returns an error: anything it
// cannot parse is not encrypted.
func IsEncrypted(data []byte) (encrypted bool) {
	defer func() {
		if recover() != nil {
			encrypted = false
		}
	}()
	if !bytes.Contains(data, []byte("sops")) || !bytes.Contains(data, []byte("mac")) {
		return false
	}
	var doc struct {
		Sops map[string]any `json:"sops" yaml:"sops"`
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Unmarshal(trimmed, &doc) == nil {
		return hasMetadata(doc.Sops)
	}
	if yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc) != nil {
		return false
	}
	return hasMetadata(doc.Sops)
}

func hasMetadata(m map[string]any) bool {
	if m == nil {
		return false
	}
	_, mac := m["mac"]
	_, modified := m["lastmodified"]
	_, version := m["version"]
	return mac && (modified || version)
}
