package flux

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/netpolicy"
	"github.com/regatta-dev/regatta/render/oci"
	"github.com/regatta-dev/regatta/spec"
)

// Options configure an import.
type Options struct {
	// Dir is the Flux repository's working tree.
	Dir string
	// Out is where the fleet is written; empty means Dir. Another folder
	// first gets a copy of Dir's files (the add-on sources).
	Out string
	Pull
}

// Pull says how an import reaches the artifacts of OCIRepository
// sources, which it pulls to build them as it builds repository folders.
type Pull struct {
	// OCI pulls the artifacts; nil pulls over HTTPS under the default URL
	// policy (with the login of an OCIRepository's secretRef when its
	// Secret manifest is in the repository).
	OCI *oci.Client
	// Offline pulls nothing: Kustomizations of OCIRepository sources are
	// carried over as declared, unbuilt.
	Offline bool
	// Timeout bounds the build of each OCIRepository Kustomization (a
	// registry that accepts and never answers); 0 is DefaultPullTimeout.
	// Past it the Kustomization is carried over unbuilt.
	Timeout time.Duration
}

// DefaultPullTimeout bounds each artifact build of an import.
const DefaultPullTimeout = 30 * time.Second

// Result is what an import wrote and what it could not carry over.
type Result struct {
	Files  []string
	Report *migrate.Report
}

// Run imports the Flux repository in opts.Dir and writes the fleet.
func Run(ctx context.Context, opts Options) (*Result, error) {
	fsys := os.DirFS(opts.Dir)
	fleet, report, err := Import(ctx, fsys, opts.Pull)
	if err != nil {
		return nil, err
	}
	out := opts.Out
	if out == "" {
		out = opts.Dir
	}
	if !sameDir(out, opts.Dir) {
		if err := migrate.CopyTree(fsys, out); err != nil {
			return nil, fmt.Errorf("copying %s to %s: %w", opts.Dir, out, err)
		}
	}
	files, err := fleet.Write(out, "flux")
	if err == nil {
		migrate.Validate(out, report)
	}
	return &Result{Files: files, Report: report}, err
}

func sameDir(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// Import reads the Flux repository in fsys and returns the fleet; pull
// says how OCIRepository artifacts are reached.
func Import(ctx context.Context, fsys fs.FS, pull Pull) (*migrate.Fleet, *migrate.Report, error) {
	artifacts := pull.OCI
	if artifacts == nil {
		artifacts = oci.New(oci.Options{HTTPClient: (&netpolicy.Policy{}).Client()})
	}
	r := render.New(render.Options{LeaveEncrypted: true, OCI: artifacts})
	im := &importer{ctx: ctx, fsys: fsys, report: &migrate.Report{}, r: r, files: map[string][]*migrate.Doc{}, selfFiles: map[string][]string{}, offline: pull.Offline, pullTimeout: pull.Timeout}
	if im.pullTimeout <= 0 {
		im.pullTimeout = DefaultPullTimeout
	}
	clusters, err := clusterNames(fsys)
	if err != nil {
		return nil, nil, err
	}
	g := &grouper{report: im.report}
	fleet := &migrate.Fleet{}
	secrets := im.scanSOPS()
	var scans []*scan
	for _, c := range clusters {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		s := im.scanCluster(c)
		scans = append(scans, s)
		im.reportFluxSystem(s)
		cu := &clusterUnits{cluster: c, units: map[string]*unit{}}
		vars := map[string]any{}
		cluster := newCluster(c)
		var keys clusterKeys
		for _, b := range s.kustomizations {
			if b.path == "" {
				continue
			}
			u := im.convert(s, b)
			cu.units[u.ksKey] = u
			cu.order = append(cu.order, u.ksKey)
			im.mergeVars(vars, u)
			secrets.add(&keys, b)
		}
		cluster.Spec.Decryption = keys.decryption()
		im.kubeConfig(s, cluster)
		g.all = append(g.all, cu)
		fleet.Clusters = append(fleet.Clusters, withValues(cluster, vars, pathEnv(cu)))
	}
	g.assign()
	fleet.Profiles = g.profiles()
	fleet.Alerts = im.alerts(scans, g)
	return fleet, im.report, nil
}

// mergeVars adds a Kustomization's substitute variables to the cluster's
// values; a variable two Kustomizations set differently is reported.
func (im *importer) mergeVars(vars map[string]any, u *unit) {
	for _, k := range sortedStrings(u.vars) {
		v := u.vars[k]
		if old, ok := vars[k]; ok && old != v {
			im.report.Add(u.doc, "spec.postBuild.substitute."+k, "the cluster's value %q (from another Kustomization) is used, not %q: regatta has one value per cluster", old, v)
			continue
		}
		vars[k] = v
	}
}

func sortedStrings(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// clusterNames lists the folders of clusters/.
func clusterNames(fsys fs.FS) ([]string, error) {
	entries, err := fs.ReadDir(fsys, spec.ClustersDir)
	if err != nil {
		return nil, fmt.Errorf("a Flux repository has a %s/ folder with one folder per cluster: %w", spec.ClustersDir, err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// envNames are cluster folder names that say which environment a
// cluster is, so the import labels them env=<name> too.
var envNames = map[string]bool{"production": true, "prod": true, "staging": true, "stage": true, "dev": true, "development": true, "test": true, "qa": true, "uat": true}

func newCluster(name string) *spec.Cluster {
	return &spec.Cluster{
		TypeMeta: spec.TypeMeta{APIVersion: spec.APIVersion, Kind: spec.KindCluster},
		Metadata: spec.ObjectMeta{Name: name, Labels: map[string]string{clusterLabel: name}},
	}
}

// withValues sets a cluster's values and its env label (from its name,
// else from its Kustomizations' paths).
func withValues(c *spec.Cluster, values map[string]any, env string) *spec.Cluster {
	name := c.Metadata.Name
	if envNames[name] {
		env = name
	}
	if env != "" {
		c.Metadata.Labels["env"] = env
	}
	if len(values) > 0 {
		c.Spec.Values = values
	}
	return c
}

// pathEnv is the environment a cluster's Kustomization paths name, when
// they name exactly one (apps/production, infrastructure/production).
func pathEnv(cu *clusterUnits) string {
	found := map[string]bool{}
	for _, key := range cu.order {
		for _, seg := range strings.Split(cu.units[key].path, "/") {
			if envNames[seg] {
				found[seg] = true
			}
		}
	}
	if len(found) != 1 {
		return ""
	}
	for env := range found {
		return env
	}
	return ""
}

// reportFluxSystem warns of objects the fleet applies into the
// flux-system namespace, which Flux's installation created and the
// import does not carry over: on a cluster without Flux they fail with
// `namespaces "flux-system" not found`, unless a build creates it.
func (im *importer) reportFluxSystem(s *scan) {
	var placed []render.Object
	for _, b := range s.kustomizations {
		for _, o := range b.objects {
			switch {
			case o.GetKind() == "Namespace" && o.GetAPIVersion() == "v1" && o.GetName() == selfSource:
				return
			case !isFlux(o.GetAPIVersion()) && o.GetNamespace() == selfSource:
				placed = append(placed, o)
			}
		}
	}
	for _, o := range placed {
		d := im.locate(o.Source, o.GetKind(), o.GetName())
		im.report.Add(d, "", "%s %s is placed in namespace %s, which Flux's installation created and the import does not carry over: "+
			"on cluster %s without Flux it fails with namespaces %q not found; add a Namespace %s manifest to a profile it depends on, or move the object to a namespace of its own",
			o.GetKind(), o.GetName(), selfSource, s.cluster, selfSource, selfSource)
	}
}
