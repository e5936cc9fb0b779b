package render

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/regatta-dev/regatta/spec"
)

// Placing a kustomize failure: at the kustomization file and the line of
// the entry that failed (a resource, a generator), not at the folder.

var (
	// resourceStep is one level of tidyKustomize's chain.
	resourceStep = regexp.MustCompile(`resource '([^']*)'(?: \(folder ([^)]*)\))?: `)
	// mergeMissing is kustomize's message for a generator with behavior
	// merge or replace and nothing to merge into.
	mergeMissing = regexp.MustCompile(`merging from generator &\{[^}]*\}: id resid\.ResId\{Gvk:resid\.Gvk\{Group:"[^"]*", Version:"[^"]*", Kind:"([^"]*)"[^}]*\}, Name:"([^"]*)", Namespace:"[^"]*"\} does not exist; cannot merge or replace`)
)

// placeKustomize returns the file and line of the entry a tidied kustomize
// message is about, with the message to show; root is the resolved
// kustomization folder of the add-on. It returns root and 0 when it finds
// no entry.
func (k *kustFS) placeKustomize(root, msg string) (string, int, string) {
	if m := mergeMissing.FindStringSubmatchIndex(msg); m != nil {
		kind, name := msg[m[2]:m[3]], msg[m[4]:m[5]]
		msg = msg[:m[0]] + fmt.Sprintf("generator %s %s has behavior merge or replace, but no %s %s comes from the resources to merge into", kind, name, kind, name) + msg[m[1]:]
		if file, line := k.entryLine(root, generatorKeys(kind), name, "name"); line > 0 {
			return file, line, msg
		}
		return root, 0, msg
	}
	steps := resourceStep.FindAllStringSubmatch(msg, -1)
	if len(steps) == 0 {
		return root, 0, msg
	}
	folder := root
	if n := len(steps); n > 1 && steps[n-2][2] != "" {
		folder = steps[n-2][2]
	}
	if file, line := k.entryLine(folder, []string{"resources", "components", "bases"}, steps[len(steps)-1][1], ""); line > 0 {
		return file, line, msg
	}
	return root, 0, msg
}

func generatorKeys(kind string) []string {
	if kind == "Secret" {
		return []string{"secretGenerator"}
	}
	return []string{"configMapGenerator"}
}

// entryLine finds, in the kustomization file of folder, the item of one
// of the lists under keys whose value (or whose field, when field is set)
// is value, and returns the file and the item's line.
func (k *kustFS) entryLine(folder string, keys []string, value, field string) (string, int) {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		file := path.Join(folder, name)
		data, err := fs.ReadFile(k.a.fs, file)
		if err != nil {
			continue
		}
		var root yamlv3.Node
		if yamlv3.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
			return file, 0
		}
		for _, key := range keys {
			list := spec.MappingValue(root.Content[0], key)
			if list == nil || list.Kind != yamlv3.SequenceNode {
				continue
			}
			for _, it := range list.Content {
				v := it
				if field != "" {
					v = spec.MappingValue(it, field)
				}
				if v != nil && v.Kind == yamlv3.ScalarNode && v.Value == value {
					return file, it.Line
				}
			}
		}
		return file, 0
	}
	return folder, 0
}
