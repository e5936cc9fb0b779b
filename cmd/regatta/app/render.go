package app

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"sort"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/reconciler/classify"
	"github.com/regatta-dev/regatta/reconciler/plan"
	"github.com/regatta-dev/regatta/reconciler/tenancy"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/spec"
)

// DefaultKubernetesVersion is the version offline renders assume.
const DefaultKubernetesVersion = "v1.37.0"

type renderFlags struct {
	cluster     string
	profile     string
	revision    string
	labels      map[string]string
	kubeVersion string
	showSecrets bool
	render      renderOptionFlags
	// eventResources are files of resources an event profile reacts to.
	eventResources []string
}

func newRenderCommand(stdout, stderr io.Writer) *cobra.Command {
	f := &renderFlags{}
	cmd := &cobra.Command{
		Use:   "render --cluster NAME [DIR]",
		Short: "Print the objects regatta would apply to one cluster",
		Long: `Renders every profile that selects the cluster (or only --profile) from the
fleet repository in DIR (default "."), offline, and prints the objects as YAML
in apply order: profiles in dependsOn order, add-ons in list order, Helm hooks
around their release. Secret values are redacted unless --show-secrets.

Without a live cluster the cluster's facts come from its cluster.yaml and the
flags: --labels adds or overrides labels, --kubernetes-version sets the version
that Helm's .Capabilities and version classifiers see (classifiers that look at
deployed resources cannot be evaluated offline and are reported).

An event profile (spec.eventTrigger) renders one instance per resource of
the --event-resource files its event source selects (kind, namespace, label
filters and Lua evaluated offline), as if they were in the cluster; without
such files it renders no instance.

With --revision, the repository is read at that commit straight from Git
(no checkout); otherwise the working tree is read as it is.

Exit codes: 0 rendered, 1 invalid repository or failed render, 2 usage error.`,
		Example: `  regatta render --cluster production-eu-1
  regatta render --cluster prod-1 --profile netpol --event-resource svc.yaml
  regatta render --cluster staging-1 --profile apps --revision HEAD~1
  regatta render --cluster new-1 --labels env=prod,region=us --kubernetes-version v1.36.3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := optionalDir(args)
			if err != nil {
				return err
			}
			return runRender(cmd.Context(), f, dir, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.cluster, "cluster", "", "the cluster to render for (required)")
	fl.StringVar(&f.profile, "profile", "", "render only this profile")
	fl.StringVar(&f.revision, "revision", "", "read the repository at this Git revision instead of the working tree")
	fl.StringToStringVar(&f.labels, "labels", nil, "labels to add or override, k=v,k2=v2")
	fl.StringVar(&f.kubeVersion, "kubernetes-version", DefaultKubernetesVersion, "Kubernetes version of the cluster")
	fl.BoolVar(&f.showSecrets, "show-secrets", false, "print Secret data instead of redacting it")
	fl.StringArrayVar(&f.eventResources, "event-resource", nil,
		"a YAML file of resources (multi-document) that event profiles react to, as if in the cluster; repeatable")
	f.render.register(fl)
	return cmd
}

func runRender(ctx context.Context, f *renderFlags, dir string, stdout, stderr io.Writer) error {
	if f.cluster == "" {
		return usageError("--cluster is required")
	}
	tree, err := openTree(ctx, dir, f.revision)
	if err != nil {
		return err
	}
	fleet, err := loadValid(tree, stderr)
	if err != nil {
		return err
	}
	c := fleet.Cluster(f.cluster)
	if c == nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("cluster %q is not in %s/ (%d clusters)", f.cluster, spec.ClustersDir, len(fleet.Clusters))}
	}
	facts := offlineFacts(fleet, c, f.labels, f.kubeVersion, stderr)
	profiles, err := profilesFor(fleet, facts, f.profile)
	if err != nil {
		return err
	}
	r, err := f.render.renderer()
	if err != nil {
		return err
	}
	events, err := readEventResources(f.eventResources)
	if err != nil {
		return err
	}
	for _, p := range profiles {
		if p.IsEventProfile() {
			if err := renderEventProfile(ctx, r, eventRequest{fleet: fleet, tree: tree, f: f, p: p, facts: facts, objs: events}, stdout, stderr); err != nil {
				return err
			}
			continue
		}
		res, err := r.Render(ctx, render.Request{FS: tree, Revision: f.revision, Profile: p, Cluster: facts})
		if err == nil {
			err = tenancy.Err(p, res, tenancy.Options{FS: tree})
		}
		if err != nil {
			return &ExitError{Code: ExitFailed, Err: err}
		}
		if err := writeRendered(stdout, res, f.showSecrets); err != nil {
			return err
		}
	}
	return nil
}

// openTree returns the working tree of dir, or the tree of a revision of
// its Git repository.
func openTree(ctx context.Context, dir, revision string) (fs.FS, error) {
	if revision == "" {
		return openDir(dir)
	}
	r, err := repo.Open(dir)
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	t, err := r.Tree(ctx, revision)
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	return t, nil
}

// loadValid loads a repository, printing its findings; errors make it fail.
func loadValid(tree fs.FS, stderr io.Writer) (*spec.Repository, error) {
	fleet, diags := spec.Load(tree)
	for _, d := range diags {
		prefix := "warning: "
		if d.Severity == spec.SeverityError {
			prefix = ""
		}
		fmt.Fprintln(stderr, prefix+d.Error())
	}
	if n := len(diags.Errors()); n > 0 {
		return nil, &ExitError{Code: ExitFailed, Err: fmt.Errorf("the repository is invalid: %s", plural(n, "error"))}
	}
	return fleet, nil
}

// offlineFacts builds a cluster's facts without reaching it: labels from
// cluster.yaml, classifiers that only look at the Kubernetes version, and
// the flags, which win.
func offlineFacts(fleet *spec.Repository, c *spec.Cluster, extra map[string]string, version string, stderr io.Writer) render.ClusterFacts {
	facts, skipped := classify.Facts(c, version, fleet.Classifiers, nil)
	for _, name := range skipped {
		fmt.Fprintf(stderr, "note: classifier %s looks at deployed resources and is not evaluated offline (use --labels)\n", name)
	}
	for k, v := range extra {
		facts.Labels[k] = v
	}
	return facts
}

func profilesFor(fleet *spec.Repository, facts render.ClusterFacts, only string) ([]*spec.Profile, error) {
	a := plan.Match(fleet.Profiles, plan.Cluster{Name: facts.Name, Labels: facts.Labels})
	if a.Err != nil {
		return nil, &ExitError{Code: ExitFailed, Err: a.Err}
	}
	if only == "" {
		return a.Profiles(), nil
	}
	p := fleet.Profile(only)
	if p == nil {
		return nil, &ExitError{Code: ExitFailed, Err: fmt.Errorf("profile %q is not in %s/", only, spec.ProfilesDir)}
	}
	if !p.Matches(facts.Name, facts.Labels) {
		return nil, &ExitError{Code: ExitFailed, Err: fmt.Errorf("profile %s does not select cluster %s (labels %s)", only, facts.Name, formatLabels(facts.Labels))}
	}
	return []*spec.Profile{p}, nil
}

func writeRendered(w io.Writer, res *render.Result, showSecrets bool) error {
	for _, a := range res.Artifacts { // what a tag or semver range resolved to
		fmt.Fprintf(w, "# profile: %s, add-on: %s, artifact: %s\n", res.Profile, a.Addon, a)
	}
	for _, st := range res.Steps {
		for _, o := range st.Objects {
			obj := o.Unstructured
			if !showSecrets {
				obj = RedactSecret(obj)
			}
			b, err := yaml.Marshal(obj.Object)
			if err != nil {
				return err
			}
			phase := ""
			switch {
			case st.Phase == render.PhaseNamespace:
				phase = " (release namespace, created when missing)"
			case st.Phase != "" && st.Phase != render.PhaseMain:
				phase = fmt.Sprintf(" (%s hook, weight %d)", st.Phase, st.Weight)
			}
			fmt.Fprintf(w, "---\n# profile: %s, add-on: %s%s, source: %s\n%s", res.Profile, st.Addon, phase, o.Source, b)
		}
	}
	return nil
}

// Redacted replaces every Secret value in output.
const Redacted = "<redacted>"

// RedactSecret returns a copy of a Secret with every data and stringData
// value replaced; other objects are returned as they are.
func RedactSecret(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj.GetKind() != "Secret" || obj.GroupVersionKind().Group != "" {
		return obj
	}
	out := obj.DeepCopy()
	for _, field := range []string{"data", "stringData"} {
		m, ok := out.Object[field].(map[string]any)
		if !ok {
			continue
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			m[k] = Redacted
		}
	}
	return out
}
