package render

import (
	"bytes"
	"io/fs"
	"path"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/spec"
)

// generateKustomization stands in for the missing kustomization file of
// dir, as Flux's kustomize-controller does: its resources are every
// manifest file below dir (files whose documents all have apiVersion and
// kind), and every sub-folder that has a kustomization file of its own
// (not looked into further). It returns the path of the stand-in.
func (k *kustFS) generateKustomization(dir string) (string, error) {
	var resources []string
	if err := k.collectResources(dir, dir, &resources); err != nil {
		return "", err
	}
	sort.Strings(resources)
	kus := map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1",
		"kind":       "Kustomization",
		"resources":  resources,
	}
	out, err := yaml.Marshal(kus)
	if err != nil {
		return "", err
	}
	file := path.Join(dir, spec.KustomizationFiles[0])
	k.overrides[file] = out
	return file, nil
}

func (k *kustFS) collectResources(root, dir string, out *[]string) error {
	entries, err := k.a.fs.ReadDir(dir)
	if err != nil {
		return fileError(dir, 0, describePathError(dir, err))
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		switch {
		case k.a.fs.isDir(p) && k.hasKustomization(p):
			*out = append(*out, rel)
		case k.a.fs.isDir(p):
			if err := k.collectResources(root, p, out); err != nil {
				return err
			}
		case hasManifestExt(e.Name()) && k.isManifestFile(p):
			*out = append(*out, rel)
		}
	}
	return nil
}

func (k *kustFS) hasKustomization(dir string) bool {
	for _, name := range spec.KustomizationFiles {
		if _, err := k.a.fs.Stat(path.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// isManifestFile reports whether every non-empty document of a file has
// apiVersion and kind (values files and other YAML are left out), and is
// not one of regatta's own documents (cluster.yaml, profiles).
func (k *kustFS) isManifestFile(p string) bool {
	data, err := fs.ReadFile(k.a.fs, p)
	if err != nil {
		return false
	}
	found := false
	for _, doc := range splitDocuments(data) {
		if len(bytes.TrimSpace(doc.data)) == 0 {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if yaml.Unmarshal(doc.data, &head) != nil || head.APIVersion == "" || head.Kind == "" {
			return false
		}
		if strings.HasPrefix(head.APIVersion, "regatta.dev/") {
			return false // the fleet's own documents are never cluster objects
		}
		found = true
	}
	return found
}
