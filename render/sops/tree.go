package sops

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// node is the ordered document tree that decryption walks. It mirrors the
// tree of sops' stores: mappings keep key order, aliases are expanded,
// comments are dropped (they are never part of the MAC).
type node struct {
	kind  nodeKind
	keys  []string // mapping keys
	items []*node  // mapping values or sequence items
	value any      // scalar: string, int, float64, bool, time.Time, nil, ...
}

type nodeKind int

const (
	scalarNode nodeKind = iota
	mappingNode
	sequenceNode
)

// maxNodes bounds a document after alias expansion (billion laughs).
const maxNodes = 1 << 20

var errTooLarge = errors.New("document too large after alias expansion")

// parseYAML reads every document of a YAML stream as sops' YAML store does.
func parseYAML(data []byte) ([]*node, error) {
	if len(data) > 0 {
		// Like sops: decoding into a map catches duplicate keys in the
		// first document.
		if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(make(map[string]any)); err != nil {
			return nil, err
		}
	}
	b := &yamlBuilder{}
	var docs []*node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		n, err := b.document(&doc)
		if err != nil {
			return nil, err
		}
		docs = append(docs, n)
	}
}

type yamlBuilder struct{ count int }

func (b *yamlBuilder) document(doc *yaml.Node) (*node, error) {
	n := doc
	for n.Kind == yaml.DocumentNode || n.Kind == yaml.AliasNode {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) == 0 {
			return &node{kind: mappingNode}, nil
		} else {
			n = n.Content[0]
		}
	}
	switch {
	case n.Kind == yaml.MappingNode:
		return b.value(n)
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null":
		return &node{kind: mappingNode}, nil
	case n.Kind == yaml.SequenceNode:
		return nil, errors.New("YAML documents that are sequences are not supported")
	default:
		return nil, errors.New("YAML documents that are values are not supported")
	}
}

func (b *yamlBuilder) value(y *yaml.Node) (*node, error) {
	if b.count++; b.count > maxNodes {
		return nil, errTooLarge
	}
	switch y.Kind {
	case yaml.AliasNode:
		return b.value(y.Alias)
	case yaml.SequenceNode:
		n := &node{kind: sequenceNode}
		for _, item := range y.Content {
			v, err := b.value(item)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		return n, nil
	case yaml.MappingNode:
		return b.mapping(y)
	case yaml.ScalarNode:
		var v any
		_ = y.Decode(&v) // as sops does: a scalar that does not decode is nil
		return &node{kind: scalarNode, value: v}, nil
	default:
		return nil, fmt.Errorf("unexpected YAML node kind %d", y.Kind)
	}
}

func (b *yamlBuilder) mapping(y *yaml.Node) (*node, error) {
	n := &node{kind: mappingNode}
	for i := 0; i+1 < len(y.Content); i += 2 {
		var k any
		_ = y.Content[i].Decode(&k)
		key, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("a mapping key of type %T: only string keys are supported", k)
		}
		v, err := b.value(y.Content[i+1])
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, key)
		n.items = append(n.items, v)
	}
	return n, nil
}

// parseJSON reads a JSON object as sops' JSON store does (numbers are int
// when they fit, else float64).
func parseJSON(data []byte) ([]*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errors.New("only JSON documents with a top-level object are supported")
	}
	j := &jsonBuilder{dec: dec}
	n, err := j.object()
	if err != nil {
		return nil, err
	}
	return []*node{n}, nil
}

type jsonBuilder struct {
	dec   *json.Decoder
	count int
}

func (j *jsonBuilder) object() (*node, error) {
	n := &node{kind: mappingNode}
	for {
		t, err := j.dec.Token()
		if err != nil {
			return nil, err
		}
		if d, ok := t.(json.Delim); ok && d == '}' {
			return n, nil
		}
		key, ok := t.(string)
		if !ok {
			return nil, errors.New("expected a JSON object key")
		}
		v, err := j.value()
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, key)
		n.items = append(n.items, v)
	}
}

func (j *jsonBuilder) array() (*node, error) {
	n := &node{kind: sequenceNode}
	for {
		if !j.dec.More() {
			_, err := j.dec.Token() // ']'
			return n, err
		}
		v, err := j.value()
		if err != nil {
			return nil, err
		}
		n.items = append(n.items, v)
	}
}

func (j *jsonBuilder) value() (*node, error) {
	if j.count++; j.count > maxNodes {
		return nil, errTooLarge
	}
	t, err := j.dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		if t == '{' {
			return j.object()
		}
		if t == '[' {
			return j.array()
		}
		return nil, fmt.Errorf("unexpected %q", t)
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return &node{value: int(i)}, nil
		}
		f, err := t.Float64()
		if err != nil {
			return nil, err
		}
		return &node{value: f}, nil
	default:
		return &node{value: t}, nil
	}
}
