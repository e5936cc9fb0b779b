package render

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/regatta-dev/regatta/spec"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// document is one YAML document of a file and the line it starts on.
type document struct {
	data []byte
	line int
}

// splitDocuments cuts a multi-document YAML stream at its "---" lines.
// A separator line may carry content after "--- ", which starts the next
// document.
func splitDocuments(data []byte) []document {
	var docs []document
	start, startLine := 0, 1
	line := 1
	for off := 0; off < len(data); line++ {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		text := bytes.TrimRight(data[off:next], "\r\n")
		if isSeparator(text) {
			docs = append(docs, document{data: data[start:off], line: startLine})
			start, startLine = off+3, line
		}
		off = next
	}
	return append(docs, document{data: data[start:], line: startLine})
}

func isSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := line[3:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t'
}

// firstContentLine is the line of the first key of a document: leading
// blank and comment lines are skipped.
func (d document) firstContentLine() int {
	lines := bytes.Split(d.data, []byte("\n"))
	for i, l := range lines {
		t := bytes.TrimSpace(l)
		if len(t) > 0 && t[0] != '#' {
			return d.line + i
		}
	}
	return d.line
}

// decodeObjects parses a YAML or JSON stream into objects, skipping empty
// documents and flattening List kinds. Errors name file and line.
func decodeObjects(file string, data []byte) ([]Object, error) {
	var out []Object
	for _, doc := range splitDocuments(data) {
		objs, err := decodeDocument(file, doc)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func decodeDocument(file string, doc document) ([]Object, error) {
	if len(bytes.TrimSpace(doc.data)) == 0 {
		return nil, nil
	}
	js, err := yaml.YAMLToJSON(doc.data)
	if err != nil {
		line, msg := yamlErrorLine(doc.data, err)
		return nil, &Error{File: file, Line: doc.line + max(line, 1) - 1, Err: errors.New(msg)}
	}
	if string(js) == "null" {
		return nil, nil
	}
	var m map[string]any
	if err := utiljson.Unmarshal(js, &m); err != nil {
		return nil, &Error{File: file, Line: doc.firstContentLine(), Err: errors.New("document is not a mapping (an object with apiVersion and kind)")}
	}
	return flatten(file, doc.firstContentLine(), m)
}

// flatten checks apiVersion and kind and expands a List kind into its items.
func flatten(file string, line int, m map[string]any) ([]Object, error) {
	if err := checkTypeMeta(m, ""); err != nil {
		return nil, &Error{File: file, Line: line, Err: err}
	}
	u := &unstructured.Unstructured{Object: m}
	items, isList := m["items"].([]any)
	if !isList || !strings.HasSuffix(u.GetKind(), "List") {
		return []Object{{Unstructured: u, Source: file}}, nil
	}
	out := make([]Object, 0, len(items))
	for i, it := range items {
		im, ok := it.(map[string]any)
		where := fmt.Sprintf("%s item %d: ", u.GetKind(), i)
		if !ok {
			return nil, &Error{File: file, Line: line, Err: errors.New(where + "not an object")}
		}
		if err := checkTypeMeta(im, where); err != nil {
			return nil, &Error{File: file, Line: line, Err: err}
		}
		out = append(out, Object{Unstructured: &unstructured.Unstructured{Object: im}, Source: file})
	}
	return out, nil
}

func checkTypeMeta(m map[string]any, where string) error {
	av, _ := m["apiVersion"].(string)
	k, _ := m["kind"].(string)
	switch {
	case av == "" && k == "":
		return errors.New(where + "document has no apiVersion and no kind")
	case av == "":
		return fmt.Errorf("%s%s has no apiVersion", where, k)
	case k == "":
		return errors.New(where + "document has no kind")
	}
	return nil
}

// yamlErrorLine explains a YAML parser error on data: its real line (see
// spec.YAMLSyntaxError) and message.
func yamlErrorLine(data []byte, err error) (int, string) {
	line, msg := spec.YAMLSyntaxError(data, err)
	return line, "invalid YAML: " + msg
}
