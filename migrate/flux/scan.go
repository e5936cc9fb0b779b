package flux

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// object is a Flux object of a cluster: its content as Flux would apply
// it (after the build that produced it) and the document it was written
// in, for the report.
type object struct {
	obj map[string]any
	doc *migrate.Doc
}

func (o object) kind() string      { return migrate.Str(o.obj, "kind") }
func (o object) name() string      { return migrate.Str(o.obj, "metadata", "name") }
func (o object) namespace() string { return migrate.Str(o.obj, "metadata", "namespace") }
func (o object) group() string {
	g, _, _ := strings.Cut(migrate.Str(o.obj, "apiVersion"), "/")
	return g
}

// key names an object for references: Kind/namespace/name.
func (o object) key() string { return refKey(o.kind(), o.namespace(), o.name()) }

func refKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// scan is everything found for one cluster.
type scan struct {
	cluster string
	// objects by key: sources, Kustomizations, HelmReleases, ConfigMaps
	// and Secrets (for substituteFrom and valuesFrom).
	objects map[string]object
	// kustomizations in discovery order, with their builds.
	kustomizations []*build
}

// build is one Kustomization of a cluster and what kustomize made of it.
type build struct {
	ks object
	// path is the repository folder built ("" when it could not be).
	path      string
	postBuild *spec.PostBuild
	// oci is the Kustomization's OCIRepository source, or nil.
	oci     *spec.OCISource
	vars    map[string]string
	objects []render.Object
	// fluxKinds are the apiVersion/kind pairs of Flux objects in the
	// build, which regatta's kustomize add-on leaves out.
	fluxKinds [][2]string
	plain     int
}

// importer holds one import's inputs and caches.
type importer struct {
	ctx    context.Context
	fsys   fs.FS
	report *migrate.Report
	r      *render.Renderer
	files  map[string][]*migrate.Doc
	// selfFiles are the files of each cluster's flux-system folder.
	selfFiles map[string][]string
	// offline: OCI artifacts are not pulled; pullTimeout bounds each
	// artifact build otherwise.
	offline     bool
	pullTimeout time.Duration
}

func (im *importer) docs(file string) []*migrate.Doc {
	if d, ok := im.files[file]; ok {
		return d
	}
	d, err := migrate.ReadDocs(im.fsys, file)
	if err != nil {
		im.report.AddFinding(migrate.Finding{File: file, Message: fmt.Sprintf("not read: %v", err)})
	}
	im.files[file] = d
	return d
}

// clusterFiles lists the YAML files of a cluster folder, leaving out
// flux-system/ (Flux's own installation and sync, which regatta replaces)
// and regatta's own cluster.yaml.
func (im *importer) clusterFiles(cluster string) []string {
	root := path.Join(spec.ClustersDir, cluster)
	var files []string
	_ = fs.WalkDir(im.fsys, root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && d.Name() == selfSource && p != root:
			im.report.AddFinding(migrate.Finding{File: p, Message: "Flux's own installation and sync: not carried over (regatta replaces them)"})
			im.selfFiles[cluster] = im.yamlFiles(p)
			return fs.SkipDir
		case d.IsDir():
			return nil
		case p == path.Join(root, "cluster.yaml"):
			return nil
		case strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml"):
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files
}

// yamlFiles lists the YAML files below dir.
func (im *importer) yamlFiles(dir string) []string {
	var files []string
	_ = fs.WalkDir(im.fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	return files
}

// scanCluster reads a cluster folder and builds its Kustomizations,
// following Kustomizations that builds produce.
func (im *importer) scanCluster(cluster string) *scan {
	s := &scan{cluster: cluster, objects: map[string]object{}}
	var queue []object
	files := im.clusterFiles(cluster)
	// Flux's own GitRepository tells which sources are this repository.
	for _, f := range im.selfFiles[cluster] {
		for _, d := range im.docs(f) {
			if d.Kind() == "GitRepository" && d.APIGroup() == groupSource {
				s.objects[refKey(d.Kind(), d.Namespace(), d.Name())] = object{obj: d.Obj, doc: d}
			}
		}
	}
	for _, f := range files {
		for _, d := range im.docs(f) {
			o := object{obj: d.Obj, doc: d}
			switch d.APIGroup() {
			case "regatta.dev":
				continue
			case "kustomize.config.k8s.io":
				im.outsideResources(d)
				continue
			}
			if o.namespace() == "" {
				o.obj = withNamespace(o.obj, selfSource)
			}
			queue = append(queue, s.add(im, o, true)...)
		}
	}
	seen := map[string]bool{}
	for len(queue) > 0 {
		ks := queue[0]
		queue = queue[1:]
		if seen[ks.key()] {
			continue
		}
		seen[ks.key()] = true
		b := im.build(s, ks)
		s.kustomizations = append(s.kustomizations, b)
		for _, o := range b.objects {
			fo := object{obj: o.Object, doc: im.locate(o.Source, o.GetKind(), o.GetName())}
			queue = append(queue, s.add(im, fo, false)...)
		}
	}
	return s
}

// add records an object and returns it when it is a Kustomization to
// build. Objects of the cluster folder that are not Flux's are applied by
// Flux's own sync, which the import does not carry over.
func (s *scan) add(im *importer, o object, inClusterDir bool) []object {
	switch o.kind() {
	case "ConfigMap", "Secret":
		s.objects[o.key()] = o
		return nil
	}
	if !strings.HasSuffix(o.group(), fluxGroupSuffix) {
		if inClusterDir {
			im.report.Add(o.doc, "", "%s %s in the cluster folder is applied by Flux's own sync: not carried over (put it in a folder a Kustomization builds)", o.kind(), o.name())
		}
		return nil
	}
	s.objects[o.key()] = o
	if o.group() == groupKustomize && o.kind() == "Kustomization" {
		return []object{o}
	}
	if inClusterDir && o.kind() == "HelmRelease" {
		im.report.Add(o.doc, "", "HelmRelease %s in the cluster folder is applied by Flux's own sync: not carried over (put it in a folder a Kustomization builds)", o.name())
	}
	return nil
}

func withNamespace(obj map[string]any, ns string) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	meta := map[string]any{}
	for k, v := range migrate.Map(obj, "metadata") {
		meta[k] = v
	}
	meta["namespace"] = ns
	out["metadata"] = meta
	return out
}

// locate finds the document an object of a build was written in, for the
// report's file and line; kustomize may have renamed it, so the first
// document of the kind is the fallback.
func (im *importer) locate(file, kind, name string) *migrate.Doc {
	docs := im.docs(file)
	var first *migrate.Doc
	for _, d := range docs {
		if d.Kind() != kind {
			continue
		}
		if d.Name() == name {
			return d
		}
		if first == nil {
			first = d
		}
	}
	if first == nil {
		return &migrate.Doc{File: file}
	}
	return first
}

// outsideResources reports the resources of a cluster folder's own
// kustomization.yaml that lie outside the folder: the import reads the
// cluster folder's files, not what its kustomization pulls in.
func (im *importer) outsideResources(d *migrate.Doc) {
	for i, r := range migrate.List(d.Obj, "resources") {
		if p, ok := r.(string); ok && strings.HasPrefix(path.Clean(p), "..") {
			im.report.Add(d, fmt.Sprintf("resources[%d]", i), "%s is outside the cluster folder: not read (move the Flux objects into the cluster folder)", p)
		}
	}
}
