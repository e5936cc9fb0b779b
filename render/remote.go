package render

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/spec"
)

// kustRefs are the fields of a kustomization that name files or folders,
// any of which kustomize would fetch over the network when it is a URL.
type kustRefs struct {
	Resources             []string          `json:"resources"`
	Components            []string          `json:"components"`
	Bases                 []string          `json:"bases"`
	Crds                  []string          `json:"crds"`
	Configurations        []string          `json:"configurations"`
	Generators            []string          `json:"generators"`
	Transformers          []string          `json:"transformers"`
	Validators            []string          `json:"validators"`
	PatchesStrategicMerge []string          `json:"patchesStrategicMerge"`
	Patches               []pathRef         `json:"patches"`
	PatchesJSON6902       []pathRef         `json:"patchesJson6902"`
	Replacements          []pathRef         `json:"replacements"`
	OpenAPI               map[string]string `json:"openapi"`
	ConfigMapGenerator    []generatorRefs   `json:"configMapGenerator"`
	SecretGenerator       []generatorRefs   `json:"secretGenerator"`
}

type pathRef struct {
	Path string `json:"path"`
}

type generatorRefs struct {
	Files []string `json:"files"`
	Envs  []string `json:"envs"`
	Env   string   `json:"env"`
}

func (k *kustRefs) all() []string {
	out := concat(k.Resources, k.Components, k.Bases, k.Crds, k.Configurations,
		k.Generators, k.Transformers, k.Validators, k.PatchesStrategicMerge)
	for _, refs := range [][]pathRef{k.Patches, k.PatchesJSON6902, k.Replacements} {
		for _, r := range refs {
			out = append(out, r.Path)
		}
	}
	out = append(out, k.OpenAPI["path"])
	for _, g := range append(k.ConfigMapGenerator, k.SecretGenerator...) {
		for _, f := range g.Files {
			_, src, _ := strings.Cut(f, "=")
			out = append(out, src, f)
		}
		out = append(append(out, g.Envs...), g.Env)
	}
	return out
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func isKustomizationFile(p string) bool {
	base := path.Base(p)
	for _, f := range spec.KustomizationFiles {
		if base == f {
			return true
		}
	}
	return false
}

// remotes returns every remote reference of a kustomization, in order.
func remotes(data []byte) []string {
	var refs kustRefs
	if yaml.Unmarshal(data, &refs) != nil {
		return nil
	}
	var out []string
	for _, r := range refs.all() {
		if isRemoteRef(r) {
			out = append(out, r)
		}
	}
	return out
}

// checkRemoteURLs runs Options.CheckURL on each remote reference.
func (a *addonRender) checkRemoteURLs(file string, data []byte) error {
	check := a.r.opts.CheckURL
	if check == nil {
		return nil
	}
	for _, r := range remotes(data) {
		if err := check(a.ctx, strings.TrimSpace(r)); err != nil {
			return &Error{File: file, Line: lineOf(data, r), Err: fmt.Errorf("remote base: %w", err)}
		}
	}
	return nil
}

// firstRemote returns the first remote reference of a kustomization and
// its line, or "". Unparsable files are left to kustomize, which reports
// them.
func firstRemote(data []byte) (string, int) {
	var refs kustRefs
	if yaml.Unmarshal(data, &refs) != nil {
		return "", 0
	}
	for _, r := range refs.all() {
		if isRemoteRef(r) {
			return r, lineOf(data, r)
		}
	}
	return "", 0
}

// checkRemote refuses a kustomization that refers to a remote base or
// file, before kustomize could fetch it; when remote bases are allowed it
// marks the render as one that read remote content.
func (a *addonRender) checkRemote(file string, data []byte) error {
	r, line := firstRemote(data)
	switch {
	case r == "":
		return nil
	case a.allowRemote:
		a.usedRemote.Store(true)
		return a.checkRemoteURLs(file, data)
	}
	return &Error{File: file, Line: line, Err: fmt.Errorf("%q is remote: %w", r, ErrRemoteRefused)}
}

// scpUser matches the user@ of an scp-style git address (git@host:org/repo).
var scpUser = regexp.MustCompile(`^[A-Za-z0-9._~-]+@[A-Za-z0-9.-]+[:/]`)

// isRemoteRef mirrors the forms kustomize clones or downloads: any URL
// scheme, git:: and user@host: prefixes, and github.com paths. Inline
// YAML (several lines) is never a reference.
func isRemoteRef(r string) bool {
	r = strings.ToLower(strings.TrimSpace(r))
	if r == "" || strings.Contains(r, "\n") {
		return false
	}
	return strings.Contains(r, "://") || strings.HasPrefix(r, "git::") ||
		strings.HasPrefix(r, "gh:") || strings.HasPrefix(r, "github.com/") ||
		strings.HasPrefix(r, "github.com:") || scpUser.MatchString(r)
}

// lineOf returns the 1-based line where s first occurs in data, or 0.
func lineOf(data []byte, s string) int {
	i := bytes.Index(data, []byte(s))
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}
