package spec

import "go.yaml.in/yaml/v3"

// MappingValue returns the value of key in a YAML mapping node, or nil
// (also when m is nil or not a mapping). Callers use it to find the line
// of an entry in a file they did not decode with Load.
func MappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
