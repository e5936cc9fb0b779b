package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Repository is one revision of a fleet repository, loaded and defaulted.
type Repository struct {
	Clusters    []*Cluster
	Profiles    []*Profile
	Classifiers []*Classifier
	// EventSources are the documents of events/, by name.
	EventSources []*EventSource
	// Rollouts are the rollouts/<profile>.yaml control files.
	Rollouts []*RolloutControl
	Tenants  []*Tenant
	// Alerts are the documents of alerts/, by name.
	Alerts []*Alert

	// unloaded names the documents that were found but failed to decode,
	// by kind and name ("Profile/a"): a reference to one is not also
	// reported as a reference to nothing.
	unloaded map[string]bool
	// tenantFolders are the tenants' declarations by folder name, as far
	// as they decoded (loaded or not).
	tenantFolders map[string]*Tenant
	// Refused are the tenants whose folders did not load (Admit).
	Refused []*RefusedTenant

	// FS is the tree the repository was loaded from; add-on paths are
	// relative to its root.
	FS fs.FS
}

// Cluster returns the cluster with the given name, or nil.
func (r *Repository) Cluster(name string) *Cluster {
	i := sort.Search(len(r.Clusters), func(i int) bool { return r.Clusters[i].Metadata.Name >= name })
	if i < len(r.Clusters) && r.Clusters[i].Metadata.Name == name {
		return r.Clusters[i]
	}
	return nil
}

// Profile returns the profile with the given name, or nil.
func (r *Repository) Profile(name string) *Profile {
	i := sort.Search(len(r.Profiles), func(i int) bool { return r.Profiles[i].Metadata.Name >= name })
	if i < len(r.Profiles) && r.Profiles[i].Metadata.Name == name {
		return r.Profiles[i]
	}
	return nil
}

// Folders of the repository format.
const (
	ClustersDir    = "clusters"
	ProfilesDir    = "profiles"
	ClassifiersDir = "classifiers"
	ClusterFile    = "cluster.yaml"
)

// Load reads, decodes, defaults and validates every Cluster, Profile and
// Classifier of the repository tree fsys. It returns the repository and
// every finding; the repository is usable only when diags.Err() is nil.
func Load(fsys fs.FS) (*Repository, Diagnostics) {
	var diags Diagnostics
	repo := &Repository{FS: fsys}
	for _, f := range listClusterFiles(fsys, &diags) {
		c := &Cluster{}
		if loadDocument(fsys, f, KindCluster, c, &c.Source, &diags) {
			repo.Clusters = append(repo.Clusters, c)
		}
	}
	for _, f := range listYAML(fsys, ProfilesDir, &diags) {
		p := &Profile{}
		if loadDocument(fsys, f, KindProfile, p, &p.Source, &diags) {
			repo.Profiles = append(repo.Profiles, p)
		} else {
			repo.markUnloaded(KindProfile, p.Metadata.Name, f)
		}
	}
	loadTenants(fsys, repo, &diags)
	for _, f := range listYAML(fsys, ClassifiersDir, &diags) {
		c := &Classifier{}
		if loadDocument(fsys, f, KindClassifier, c, &c.Source, &diags) {
			repo.Classifiers = append(repo.Classifiers, c)
		}
	}
	loadEventSources(fsys, repo, &diags)
	loadAlerts(fsys, repo, &diags)
	loadRolloutControls(repo, &diags)
	sortByName(repo)
	validateRepository(repo, &diags)
	diags.Sort()
	return repo, diags
}

// markUnloaded records a document of file that failed to decode, under
// its metadata.name as far as it was read, else its file name.
func (r *Repository) markUnloaded(kind, name, file string) {
	if name == "" {
		name = fileStem(file)
	}
	if r.unloaded == nil {
		r.unloaded = map[string]bool{}
	}
	r.unloaded[kind+"/"+name] = true
}

// failedToLoad reports whether a document of kind named name exists but
// failed to decode (its own errors say why).
func (r *Repository) failedToLoad(kind, name string) bool {
	return r.unloaded[kind+"/"+name]
}

func sortByName(r *Repository) {
	sort.Slice(r.Clusters, func(i, j int) bool { return r.Clusters[i].Metadata.Name < r.Clusters[j].Metadata.Name })
	sort.Slice(r.Profiles, func(i, j int) bool { return r.Profiles[i].Metadata.Name < r.Profiles[j].Metadata.Name })
	sort.Slice(r.Classifiers, func(i, j int) bool { return r.Classifiers[i].Metadata.Name < r.Classifiers[j].Metadata.Name })
}

// listClusterFiles returns clusters/<name>/cluster.yaml for every folder.
func listClusterFiles(fsys fs.FS, diags *Diagnostics) []string {
	entries, err := fs.ReadDir(fsys, ClustersDir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			*diags = append(*diags, Diagnostic{File: ClustersDir, Message: err.Error()})
		}
		return nil
	}
	var out []string
	for _, e := range entries {
		p := path.Join(ClustersDir, e.Name())
		if !e.IsDir() {
			if isYAML(e.Name()) {
				*diags = append(*diags, Diagnostic{File: p, Message: "cluster files belong in their own folder: clusters/<name>/cluster.yaml"})
			}
			continue
		}
		f := path.Join(p, ClusterFile)
		if _, err := fs.Stat(fsys, f); err != nil {
			*diags = append(*diags, Diagnostic{File: p, Message: "folder has no " + ClusterFile})
			continue
		}
		out = append(out, f)
	}
	return out
}

// listYAML returns the .yaml and .yml files directly inside dir.
func listYAML(fsys fs.FS, dir string, diags *Diagnostics) []string {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			*diags = append(*diags, Diagnostic{File: dir, Message: err.Error()})
		}
		return nil
	}
	var out []string
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		switch {
		case e.IsDir() && isYAML(e.Name()):
			*diags = append(*diags, Diagnostic{File: p, Message: fmt.Sprintf("a folder: %s are files directly in %s/ (%s/<name>.yaml)", dir, dir, dir)})
		case e.IsDir():
			*diags = append(*diags, Diagnostic{File: p, Severity: SeverityWarning, Message: fmt.Sprintf("folder not read: %s are files directly in %s/", dir, dir)})
		case isYAML(e.Name()):
			out = append(out, p)
		}
	}
	return out
}

func isYAML(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

// loadDocument strictly decodes the single document of file into obj,
// which must be of kind want. It reports whether decoding succeeded well
// enough for validation to go on.
func loadDocument(fsys fs.FS, file, want string, obj any, src *Source, diags *Diagnostics) bool {
	*src = Source{File: file, Line: 1, lines: map[string]int{}}
	rep := report{src: src, diags: diags}
	if _, err := ResolvePath(fsys, file); err != nil {
		rep.errorf("", "%v", err)
		return false
	}
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		rep.errorf("", "%v", err)
		return false
	}
	root, ok := parseSingle(data, rep)
	if !ok {
		return false
	}
	if !checkTypeMeta(root, want, src, rep) {
		return false
	}
	before := len(*diags)
	d := &decoder{rep: rep, lines: src.lines}
	d.decode(root, reflect.ValueOf(obj).Elem(), "")
	return len(*diags) == before || !hasError((*diags)[before:])
}

func hasError(ds Diagnostics) bool {
	return len(ds.Errors()) > 0
}

// parseSingle parses data as exactly one YAML document holding a mapping.
func parseSingle(data []byte, rep report) (*yaml.Node, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, msg := YAMLSyntaxError(data, err)
			rep.src.Line = line
			rep.errorf("", "invalid YAML: %s", msg)
			return nil, false
		}
		docs = append(docs, &n)
	}
	if len(docs) != 1 {
		rep.errorf("", "expected exactly one YAML document, found %d", len(docs))
		return nil, false
	}
	root := docs[0].Content[0]
	if root.Kind != yaml.MappingNode {
		rep.src.Line = root.Line
		rep.errorf("", "expected a mapping with apiVersion, kind, metadata and spec")
		return nil, false
	}
	rep.src.Line = root.Line
	return root, true
}

// checkTypeMeta reads apiVersion and kind before anything else, as kind does.
func checkTypeMeta(root *yaml.Node, want string, src *Source, rep report) bool {
	var tm TypeMeta
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "apiVersion":
			tm.APIVersion, src.lines["apiVersion"] = v.Value, v.Line
		case "kind":
			tm.Kind, src.lines["kind"] = v.Value, v.Line
		}
	}
	ok := true
	if tm.APIVersion != APIVersion {
		rep.errorf("apiVersion", "unknown apiVersion %q (this regatta reads %s)", tm.APIVersion, APIVersion)
		ok = false
	}
	if tm.Kind != want {
		rep.errorf("kind", "expected kind %s in %s/, got %q", want, path.Dir(src.File), tm.Kind)
		ok = false
	}
	return ok
}
