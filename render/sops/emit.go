package sops

import (
	"bytes"
	"encoding/json"

	"go.yaml.in/yaml/v3"
)

// emitYAML writes the documents as a YAML stream (4-space indent, like
// sops). Comments are not kept.
func emitYAML(docs []*node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(4)
	for _, d := range docs {
		y, err := toYAML(d)
		if err != nil {
			return nil, err
		}
		if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{y}}); err != nil {
			return nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func toYAML(n *node) (*yaml.Node, error) {
	switch n.kind {
	case mappingNode:
		y := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for i, k := range n.keys {
			v, err := toYAML(n.items[i])
			if err != nil {
				return nil, err
			}
			key := &yaml.Node{}
			if err := key.Encode(k); err != nil {
				return nil, err
			}
			if k == "<<" {
				key.Tag = "!!merge" // a merge key stays a merge key
			}
			y.Content = append(y.Content, key, v)
		}
		return y, nil
	case sequenceNode:
		y := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, it := range n.items {
			v, err := toYAML(it)
			if err != nil {
				return nil, err
			}
			y.Content = append(y.Content, v)
		}
		return y, nil
	default:
		y := &yaml.Node{}
		return y, y.Encode(plainScalar(n.value))
	}
}

// plainScalar maps decrypted values to what the encoders should write.
func plainScalar(v any) any {
	switch v := v.(type) {
	case []byte:
		return string(v)
	case comment:
		return string(v)
	default:
		return v
	}
}

// emitJSON writes the single document as indented JSON, keys in order.
func emitJSON(docs []*node) ([]byte, error) {
	var compact bytes.Buffer
	if err := writeJSON(&compact, docs[0]); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, n *node) error {
	switch n.kind {
	case mappingNode:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			if err := writeJSON(b, n.items[i]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case sequenceNode:
		b.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, it); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		v, err := json.Marshal(plainScalar(n.value))
		if err != nil {
			return err
		}
		b.Write(v)
	}
	return nil
}
