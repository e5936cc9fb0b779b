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
	// generatorSource names the env files, files or literals of a
	// generator that failed.
	generatorSource = regexp.MustCompile(`loading KV pairs: (?:env source files|file sources|literal sources): \[([^\] ]*)`)
	// builtinConfig is kustomize's dump of a built-in plugin's YAML
	// configuration, which the placed entry shows better.
	builtinConfig = regexp.MustCompile("trouble configuring builtin \\w+ with config: `[^`]*`: ")
	// patchFile names the file of a patch that failed.
	patchFile = regexp.MustCompile(`failed to get the patch file from path\(([^)]*)\)`)
)

var (
	resourceKeys  = []string{"resources", "components", "bases"}
	generatorKeys = []string{"configMapGenerator", "secretGenerator"}
	patchKeys     = []string{"patches", "patchesStrategicMerge", "patchesJson6902"}
)

// placeKustomize returns the file and line of the entry a tidied kustomize
// message is about, with the message to show; root is the resolved
// kustomization folder of the add-on. The entry is looked for in the
// kustomization of the innermost folder the message names. It returns
// root and 0 when it finds no entry.
func (k *kustFS) placeKustomize(root, msg string) (string, int, string) {
	msg = builtinConfig.ReplaceAllString(msg, "")
	keys, value := resourceKeys, ""
	at := len(msg)
	switch m := mergeMissing.FindStringSubmatchIndex(msg); {
	case m != nil:
		kind, name := msg[m[2]:m[3]], msg[m[4]:m[5]]
		msg = msg[:m[0]] + fmt.Sprintf("generator %s %s has behavior merge or replace, but no %s %s comes from the resources to merge into", kind, name, kind, name) + msg[m[1]:]
		keys, value, at = generatorKeys, name, m[0]
	case generatorSource.MatchString(msg):
		m := generatorSource.FindStringSubmatchIndex(msg)
		keys, value, at = generatorKeys, msg[m[2]:m[3]], m[0]
	case patchFile.MatchString(msg):
		m := patchFile.FindStringSubmatchIndex(msg)
		keys, value, at = patchKeys, msg[m[2]:m[3]], m[0]
	}
	folder := root
	steps := resourceStep.FindAllStringSubmatchIndex(msg[:at], -1)
	if value == "" && len(steps) > 0 {
		last := steps[len(steps)-1]
		value = msg[last[2]:last[3]]
		steps = steps[:len(steps)-1] // the entry is in the folder before it
	}
	if n := len(steps); n > 0 && steps[n-1][4] >= 0 {
		folder = msg[steps[n-1][4]:steps[n-1][5]]
	}
	if value == "" {
		return root, 0, msg
	}
	if file, line := k.entryLine(folder, keys, value); line > 0 {
		return file, line, msg
	}
	return root, 0, msg
}

// entryLine finds, in the kustomization file of folder, the first item of
// one of the lists under keys that is value or holds it (a generator's
// name or env file, a patch's path), and returns the file and the item's
// line.
func (k *kustFS) entryLine(folder string, keys []string, value string) (string, int) {
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
				if holds(it, value) {
					return file, it.Line
				}
			}
		}
		return file, 0
	}
	return folder, 0
}

// holds reports whether n is, or holds among its values, the scalar value.
func holds(n *yamlv3.Node, value string) bool {
	switch n.Kind {
	case yamlv3.ScalarNode:
		return n.Value == value
	case yamlv3.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if holds(n.Content[i], value) {
				return true
			}
		}
	case yamlv3.SequenceNode:
		for _, c := range n.Content {
			if holds(c, value) {
				return true
			}
		}
	}
	return false
}
