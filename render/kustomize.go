package render

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/spec"
)

// kustomizeMu guards kyaml's OpenAPI schema, which kyaml keeps in
// package-level variables. Every build sets it (krusty's Run calls
// openapi.SetSchema), but a build whose kustomizations declare no
// `openapi` field only ever resets it to the built-in schema: such builds
// share kustomizeMu and run in parallel, once the schema is parsed (see
// lockShared). A build whose kustomizations declare a custom schema takes
// it alone and resets the schema afterwards, so the custom schema reaches
// no other build (kyaml would otherwise keep it for the rest of the
// process). kustomizeMu and schemaParsed are the package's only mutable
// package-level state.
var kustomizeMu sync.RWMutex

// schemaParsed says kyaml's built-in schema is parsed; guarded by
// kustomizeMu. kyaml parses it lazily at a build's first need and marks it
// parsed before it has filled its maps, which it then reads without a
// lock: two shared builds after a reset would read what the other one is
// still writing. So the first shared build after a reset parses it alone.
var schemaParsed bool

// lockShared read-locks kustomizeMu for a build that shares kyaml's
// built-in schema, parsing the schema first under the write lock if a
// reset dropped it. Release with kustomizeMu.RUnlock.
func lockShared() {
	for {
		kustomizeMu.RLock()
		if schemaParsed {
			return
		}
		kustomizeMu.RUnlock()
		kustomizeMu.Lock()
		if !schemaParsed {
			openapi.Schema() // parses the built-in schema
			schemaParsed = true
		}
		kustomizeMu.Unlock()
	}
}

// resetSchema drops kyaml's schema; kustomizeMu must be write-locked.
func resetSchema() {
	openapi.ResetOpenAPI()
	schemaParsed = false
}

// schemaRelease drops kyaml's parsed OpenAPI schema (about 4 MiB, kept
// process-wide once a build needed it) when the Renderer built no
// kustomization for a while, as a daemon between commits does; the next
// build parses it again. The zero value (or after <= 0) keeps it.
type schemaRelease struct {
	after   time.Duration
	release func() // releaseSchema; tests count calls
	mu      sync.Mutex
	timer   *time.Timer
}

// built re-arms the release after a build.
func (s *schemaRelease) built() {
	if s.after <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer == nil {
		s.timer = time.AfterFunc(s.after, s.release)
		return
	}
	s.timer.Reset(s.after)
}

// releaseSchema resets kyaml's schema while no build runs.
func releaseSchema() {
	kustomizeMu.Lock()
	defer kustomizeMu.Unlock()
	resetSchema()
}

// errCustomSchema stops a shared build at the first kustomization that
// declares an OpenAPI schema, before kustomize installs it.
var errCustomSchema = errors.New("the kustomization declares an OpenAPI schema")

// runKustomize builds dir in the file system fsys: shared first, alone
// when a kustomization read on the way declares a custom schema.
func runKustomize(fsys *kustFS, dir string) (resmap.ResMap, error) {
	lockShared()
	fsys.shared = true
	m, err := krusty.MakeKustomizer(kustomizeOptions()).Run(fsys, dir)
	kustomizeMu.RUnlock()
	if !errors.Is(fsys.failure, errCustomSchema) {
		return m, err
	}
	fsys.shared, fsys.failure = false, nil
	kustomizeMu.Lock()
	defer kustomizeMu.Unlock()
	defer resetSchema()
	return krusty.MakeKustomizer(kustomizeOptions()).Run(fsys, dir)
}

// originAnnotation is where kustomize records the file an object came from.
const originAnnotation = "config.kubernetes.io/origin"

// kustomizeOptions are krusty's defaults with plugins off, kustomize's
// legacy output order unless the kustomization sets sortOptions (the
// order of `kubectl kustomize`), and no load restriction beyond the
// repository root, which kustFS enforces: like Flux, a kustomization may
// load files from anywhere in the repository.
func kustomizeOptions() *krusty.Options {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	opts.LoadRestrictions = types.LoadRestrictionsNone
	opts.PluginConfig = types.DisabledPluginConfig()
	return opts
}

// renderKustomize builds the kustomization folder dir with the add-on's
// targetNamespace and patches (Flux semantics: they are added to the root
// kustomization, so they run after its own patches).
func (a *addonRender) renderKustomize(dir string, ks *spec.KustomizeSource) ([]Object, error) {
	root, err := a.fs.resolve(dir)
	if err != nil {
		return nil, fileError(dir, 0, describePathError(dir, err))
	}
	kfs := newKustFS(a)
	keepOrigin, err := kfs.overrideRoot(root, ks)
	if err != nil {
		return nil, err
	}
	m, err := runKustomize(kfs, absPath(root))
	a.r.schema.built()
	if err != nil {
		if kfs.failure != nil {
			return nil, kfs.failure
		}
		if e := kfs.yamlError(err); e != nil {
			return nil, e
		}
		return nil, kfs.kustomizeError(root, err)
	}
	return objectsOf(m, root, keepOrigin)
}

// kustomizeError places a kustomize failure at the kustomization file and
// line of the entry that failed, or else at the folder root.
func (k *kustFS) kustomizeError(root string, err error) error {
	msg := tidyKustomize(strings.ReplaceAll(err.Error(), "'/", "'"))
	file, line, msg := k.placeKustomize(root, msg)
	return &Error{File: file, Line: line, Err: fmt.Errorf("kustomize: %s", msg)}
}

// malformedYAML is kustomize's message for a resource file it cannot parse.
var malformedYAML = regexp.MustCompile(`MalformedYAMLError: .* in File: (\S+)`)

// yamlError places a YAML syntax error of kustomize's at the file and the
// real line (kustomize's parser names the enclosing block's line, or none
// for control characters): the file is the last one read, which kustomize
// parses right after reading it.
func (k *kustFS) yamlError(err error) error {
	m := malformedYAML.FindStringSubmatch(err.Error())
	if m == nil || k.lastPath == "" || path.Base(k.lastPath) != path.Base(m[1]) {
		return nil
	}
	_, derr := decodeObjects(k.lastPath, k.lastData)
	var re *Error
	if !errors.As(derr, &re) || !strings.HasPrefix(re.Err.Error(), "invalid YAML: ") {
		return nil // not a syntax error of that file after all
	}
	return derr
}

// Kustomize tries each resource as a file first and, failing, as a
// folder; both failures end up in its message. For a folder the first is
// "read <path>: is a directory" (with the host path on some file systems),
// for a missing file the second is "must build at directory".
var (
	kustomizeFolder = regexp.MustCompile(`accumulation err='accumulating resources from '([^']*)': [^']*': recursed accumulation of path '([^']*)': `)
	kustomizeFile   = regexp.MustCompile(`accumulation err='accumulating resources from '([^']*)': [^']*(?:no such file or directory|file does not exist)': must build at directory: (?:not a valid directory: )?`)
)

// tidyKustomize leaves one line of cause per nesting level:
// "resource '../base' (folder addons/base): resource 'x.yaml': addons/base/x.yaml does not exist".
func tidyKustomize(msg string) string {
	msg = kustomizeFolder.ReplaceAllString(msg, "resource '$1' (folder $2): ")
	msg = kustomizeFile.ReplaceAllString(msg, "resource '$1': ")
	msg = strings.ReplaceAll(msg, "accumulating resources: ", "")
	return msg
}

// overrideRoot rewrites the root kustomization as Flux does: namespace
// set to targetNamespace, the add-on's patches appended, and origin
// annotations on, so every object names its source file. It reports
// whether the user asked for origin annotations themselves.
func (k *kustFS) overrideRoot(root string, ks *spec.KustomizeSource) (bool, error) {
	file, err := k.kustomizationFile(root)
	if err != nil {
		return false, err
	}
	data, err := k.ReadFile(absPath(file))
	if err != nil {
		return false, err
	}
	kus := map[string]any{}
	if err := yaml.Unmarshal(data, &kus); err != nil {
		line, msg := yamlErrorLine(data, err)
		return false, &Error{File: file, Line: line, Err: fmt.Errorf("kustomize: invalid kustomization: %s", msg)}
	}
	if ks.TargetNamespace != "" {
		kus["namespace"] = ks.TargetNamespace
	}
	if len(ks.Patches) > 0 {
		patches, _ := kus["patches"].([]any)
		kus["patches"] = append(patches, patchMaps(ks.Patches)...)
	}
	keep := addOriginAnnotations(kus)
	out, err := yaml.Marshal(kus)
	if err != nil {
		return false, err
	}
	k.overrides[file] = out
	return keep, nil
}

// kustomizationFile finds the kustomization file of a folder.
func (k *kustFS) kustomizationFile(dir string) (string, error) {
	for _, name := range spec.KustomizationFiles {
		p := path.Join(dir, name)
		if _, err := k.a.fs.Stat(p); err == nil {
			return p, nil
		}
	}
	if !k.a.fs.isDir(dir) {
		return "", &Error{File: dir, Err: errors.New("kustomize: folder does not exist")}
	}
	return k.generateKustomization(dir)
}

func addOriginAnnotations(kus map[string]any) bool {
	meta, _ := kus["buildMetadata"].([]any)
	for _, m := range meta {
		if m == types.OriginAnnotations {
			return true
		}
	}
	kus["buildMetadata"] = append(meta, types.OriginAnnotations)
	return false
}

// patchMaps converts patches to kustomization entries.
func patchMaps(patches []spec.Patch) []any {
	out := make([]any, 0, len(patches))
	for _, p := range patches {
		m := map[string]any{"patch": p.Patch}
		if t := p.Target; t != nil {
			m["target"] = selectorMap(t)
		}
		out = append(out, m)
	}
	return out
}

func selectorMap(t *spec.PatchSelector) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{
		"group": t.Group, "version": t.Version, "kind": t.Kind, "name": t.Name,
		"namespace": t.Namespace, "labelSelector": t.LabelSelector,
		"annotationSelector": t.AnnotationSelector,
	} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// objectsOf converts kustomize's output, taking each object's source file
// from its origin annotation (a path relative to the root folder).
func objectsOf(m resmap.ResMap, root string, keepOrigin bool) ([]Object, error) {
	out := make([]Object, 0, m.Size())
	for _, res := range m.Resources() {
		obj, err := objectOf(res)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: obj}
		out = append(out, Object{Unstructured: u, Source: originOf(u, root, keepOrigin)})
	}
	return out, nil
}

// originOf reads (and unless kept, removes) the origin annotation.
func originOf(u *unstructured.Unstructured, root string, keep bool) string {
	ann := u.GetAnnotations()
	origin, ok := ann[originAnnotation]
	if !ok {
		return root
	}
	if !keep {
		delete(ann, originAnnotation)
		if len(ann) == 0 {
			ann = nil
		}
		u.SetAnnotations(ann)
	}
	// kustomize writes the origin with go.yaml.in/yaml/v3; read it back
	// with the same (not through JSON, which cost more than the rest of
	// the conversion).
	var o struct {
		Path         string `yaml:"path"`
		Repo         string `yaml:"repo"`
		ConfiguredIn string `yaml:"configuredIn"`
	}
	if yamlv3.Unmarshal([]byte(origin), &o) != nil {
		return root
	}
	switch {
	case o.Repo != "":
		return o.Repo + "//" + o.Path
	case o.Path != "":
		return path.Join(root, o.Path)
	case o.ConfiguredIn != "":
		return path.Join(root, o.ConfiguredIn)
	}
	return root
}
