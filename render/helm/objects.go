package helm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// decodeObjects parses every YAML document of a rendered file; empty
// documents are skipped and List kinds flattened. Errors name the file and
// never echo the content (it may hold Secret data).
func decodeObjects(file string, content []byte) ([]*unstructured.Unstructured, error) {
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(content)))
	var out []*unstructured.Unstructured
	for n := 1; ; n++ {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, &TemplateError{File: file, Msg: fmt.Sprintf("document %d: %v", n, err), Err: err}
		}
		objs, err := decodeDocument(doc)
		if err != nil {
			return nil, &TemplateError{File: file, Msg: fmt.Sprintf("document %d: %v", n, err), Err: err}
		}
		out = append(out, objs...)
	}
}

func decodeDocument(doc []byte) ([]*unstructured.Unstructured, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
		return nil, nil
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(j, &head); err != nil {
		return nil, errors.New("not a Kubernetes object (want a mapping with apiVersion and kind)")
	}
	if head.APIVersion == "" || head.Kind == "" {
		return nil, errors.New("object has no apiVersion or kind")
	}
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(j, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot decode", head.Kind)
	}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return []*unstructured.Unstructured{o}, nil
	case *unstructured.UnstructuredList:
		out := make([]*unstructured.Unstructured, len(o.Items))
		for i := range o.Items {
			out[i] = &o.Items[i]
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%s: unexpected %T", head.Kind, obj)
	}
}
