package sops

import (
	"bufio"
	"bytes"
	"encoding/json"

	"go.yaml.in/yaml/v3"
)

// IsEncrypted reports whether data is a sops document: YAML or JSON
// (binary files included, whose encrypted form is JSON) whose first
// document has a top-level `sops` mapping holding `mac` and
// `lastmodified` or `version`, or a dotenv file with sops_mac and
// sops_lastmodified or sops_version lines. It never panics and never
// returns an error: anything it cannot parse is not encrypted.
func IsEncrypted(data []byte) (encrypted bool) {
	defer func() {
		if recover() != nil {
			encrypted = false
		}
	}()
	if !bytes.Contains(data, []byte("sops")) || !bytes.Contains(data, []byte("mac")) {
		return false
	}
	if isDotenv(data) || isINI(data) {
		return true
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

// isDotenv reports whether data is a dotenv file sops encrypted: it has a
// sops_mac= line and a sops_lastmodified= or sops_version= line.
func isDotenv(data []byte) bool {
	var mac, other bool
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		mac = mac || bytes.HasPrefix(line, []byte("sops_mac="))
		other = other || bytes.HasPrefix(line, []byte("sops_lastmodified=")) || bytes.HasPrefix(line, []byte("sops_version="))
	}
	return mac && other
}

// isINI reports whether data is an INI file sops encrypted: a [sops]
// section with a mac key and a lastmodified or version key.
func isINI(data []byte) bool {
	var in, mac, other bool
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if bytes.HasPrefix(line, []byte("[")) {
			in = string(line) == "[sops]"
			continue
		}
		key, _, ok := bytes.Cut(line, []byte("="))
		if !in || !ok {
			continue
		}
		switch string(bytes.TrimSpace(key)) {
		case "mac":
			mac = true
		case "lastmodified", "version":
			other = true
		}
	}
	return mac && other
}
