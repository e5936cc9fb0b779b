package sveltos

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// Options configure an import.
type Options struct {
	// Files are manifest files or folders of them: ClusterProfiles,
	// Profiles, Classifiers, SveltosClusters, Cluster API Clusters and the
	// ConfigMaps and Secrets the profiles reference.
	Files []string
	// Source is a checkout of the Flux source that policyRefs and
	// kustomizationRefs of kind GitRepository, OCIRepository or Bucket
	// name paths of; it is copied into Out's sveltos-source/ (not its
	// root, where the checkout's own clusters/ or tenants/ would be read
	// as the fleet's). Empty: such refs are reported.
	Source string
	// Out is where the fleet is written.
	Out string
}

// Result is what an import wrote and what it could not carry over.
type Result struct {
	Files  []string
	Report *migrate.Report
}

// Run imports the manifests and writes the fleet into opts.Out.
func Run(ctx context.Context, opts Options) (*Result, error) {
	docs, report, err := readFiles(opts.Files)
	if err != nil {
		return nil, err
	}
	var source fs.FS
	if opts.Source != "" {
		source = os.DirFS(opts.Source)
		if err := migrate.CopyTree(source, filepath.Join(opts.Out, sourceDir)); err != nil {
			return nil, fmt.Errorf("copying %s to %s: %w", opts.Source, opts.Out, err)
		}
	}
	fleet := Import(ctx, docs, source, report)
	files, err := fleet.Write(opts.Out, "sveltos")
	if err == nil {
		migrate.Validate(opts.Out, report)
	}
	return &Result{Files: files, Report: report}, err
}

// readFiles reads every YAML document of the files and folders.
func readFiles(paths []string) ([]*migrate.Doc, *migrate.Report, error) {
	report := &migrate.Report{}
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(f string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml")) {
				files = append(files, f)
			}
			return err
		})
		if err != nil {
			return nil, nil, err
		}
	}
	sort.Strings(files)
	var docs []*migrate.Doc
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		ds, err := migrate.ParseDocs(filepath.ToSlash(f), data)
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, ds...)
	}
	return docs, report, nil
}

// importer holds one import's inputs.
type importer struct {
	ctx    context.Context
	report *migrate.Report
	source fs.FS
	// data are the ConfigMaps and Secrets given, by Kind/namespace/name.
	data  map[string]*migrate.Doc
	fleet *migrate.Fleet
	names map[string]bool
	// sources are the documents profiles were converted from, by name.
	sources map[string]*migrate.Doc
}

// Import converts the documents into a fleet.
func Import(ctx context.Context, docs []*migrate.Doc, source fs.FS, report *migrate.Report) *migrate.Fleet {
	im := &importer{
		ctx:     ctx,
		report:  report,
		source:  source,
		data:    map[string]*migrate.Doc{},
		fleet:   &migrate.Fleet{Files: map[string][]byte{}},
		names:   map[string]bool{},
		sources: map[string]*migrate.Doc{},
	}
	for _, d := range docs {
		if d.Kind() == "ConfigMap" || d.Kind() == "Secret" || (d.Kind() == kindHealthCheck && d.APIGroup() == groupLib) {
			im.data[d.Kind()+"/"+d.Namespace()+"/"+d.Name()] = d // HealthChecks for the ClusterHealthChecks naming them
		}
	}
	for _, d := range docs {
		im.convert(d)
	}
	im.dropEmpty()
	return im.fleet
}

// dropEmpty leaves out profiles nothing was carried over for, and
// dependencies on profiles that are not in the fleet.
func (im *importer) dropEmpty() {
	var kept []*spec.Profile
	names := map[string]bool{}
	for _, p := range im.fleet.Profiles {
		if len(p.Spec.Addons) > 0 {
			kept = append(kept, p)
			names[p.Metadata.Name] = true
		}
	}
	for _, p := range kept {
		var deps []string
		for _, d := range p.Spec.DependsOn {
			if names[d] {
				deps = append(deps, d)
			} else {
				im.report.Add(im.sources[p.Metadata.Name], "spec.dependsOn", "profile %s is not in the imported fleet: dependency dropped", d)
			}
		}
		p.Spec.DependsOn = deps
	}
	im.fleet.Profiles = kept
}

func (im *importer) convert(d *migrate.Doc) {
	switch {
	case d.Kind() == "ConfigMap" || d.Kind() == "Secret":
	case d.Kind() == kindClusterProfile || d.Kind() == kindProfile:
		p := im.profile(d)
		im.sources[p.Metadata.Name] = d
		im.fleet.Profiles = append(im.fleet.Profiles, p)
	case d.Kind() == kindEventSource && d.APIGroup() == groupLib:
		im.fleet.EventSources = append(im.fleet.EventSources, im.eventSource(d))
	case d.Kind() == kindEventTrigger && d.APIGroup() == groupLib:
		p := im.eventProfile(d)
		im.sources[p.Metadata.Name] = d
		im.fleet.Profiles = append(im.fleet.Profiles, p)
	case d.Kind() == kindClusterHealthCheck && d.APIGroup() == groupLib:
		if a := im.alert(d); a != nil {
			im.fleet.Alerts = append(im.fleet.Alerts, a)
		}
	case d.Kind() == kindHealthCheck && d.APIGroup() == groupLib:
		im.healthCheck(d)
	case d.Kind() == kindClassifier:
		im.fleet.Classifiers = append(im.fleet.Classifiers, im.classifier(d))
	case d.Kind() == kindSveltosCluster || (d.Kind() == kindCAPICluster && strings.HasPrefix(d.APIGroup(), "cluster.x-k8s.io")):
		im.fleet.Clusters = append(im.fleet.Clusters, im.cluster(d))
	default:
		im.report.Add(d, "", "%s %s: not a kind the Sveltos import reads", d.Kind(), d.Name())
	}
}

// cluster turns a SveltosCluster or Cluster API Cluster into a cluster
// with its labels; its kubeconfig Secret keeps the Cluster API name.
func (im *importer) cluster(d *migrate.Doc) *spec.Cluster {
	c := &spec.Cluster{
		TypeMeta: spec.TypeMeta{APIVersion: spec.APIVersion, Kind: spec.KindCluster},
		Metadata: spec.ObjectMeta{Name: d.Name()},
	}
	for k, v := range migrate.Map(d.Obj, "metadata", "labels") {
		if c.Metadata.Labels == nil {
			c.Metadata.Labels = map[string]string{}
		}
		c.Metadata.Labels[k] = fmt.Sprint(v)
	}
	if ns := d.Namespace(); ns != "" {
		im.report.Add(d, "metadata.namespace", "cluster names are unique in a fleet: namespace %s dropped", ns)
	}
	return c
}

// uniqueName returns a profile or classifier name not used yet.
func (im *importer) uniqueName(kind, name string) string {
	n := name
	for i := 2; im.names[kind+"/"+n]; i++ {
		n = fmt.Sprintf("%s-%d", name, i)
	}
	im.names[kind+"/"+n] = true
	return n
}
