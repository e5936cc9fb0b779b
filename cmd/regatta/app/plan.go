package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/classify"
	"github.com/regatta-dev/regatta/reconciler/diff"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig/cloud"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/repo"
	"github.com/regatta-dev/regatta/spec"
)

type planFlags struct {
	base, head     string
	output, color  string
	statusBranch   string
	kubeVersion    string
	warnClusters   int
	warnPercent    int
	concurrency    int
	live           bool
	kubeconfigDir  string
	fleet          string
	clusterTimeout time.Duration
	allowExec      bool
	render         renderOptionFlags
	verify         verifyFlags
}

func newPlanCommand(stdout, stderr io.Writer) *cobra.Command {
	f := &planFlags{}
	cmd := &cobra.Command{
		Use:   "plan --base REV [--head REV] [DIR]",
		Short: "Show what a change does to each cluster before it merges",
		Long: `Compares two revisions of the fleet repository in DIR (default ".") — read
straight from Git, no checkout — and shows what merging head over base does:
which clusters gain or lose which profiles and why (a label, a selector, a
new or removed cluster or profile), and per cluster and profile the objects
created, updated (with a unified diff) and deleted. Clusters with identical
changes are shown once, as a group. Secret values never appear: a changed
Secret lists the keys whose values changed.

Cluster facts (Kubernetes version, classifier labels) come from the status
branch (--status-branch) when it exists, else from --kubernetes-version and
the classifiers that only look at the version; the output says which.

With --live, the head rendering is also compared with what each cluster holds
now (server-side dry-run: nothing is changed), showing drift and out-of-band
changes that merging would overwrite. Kubeconfigs come from --kubeconfig-dir
or from the clusters' kubeconfig Secrets in the repository (SOPS-decrypted).

Exit codes: 0 nothing changes, 2 something changes, 1 errors (an invalid or
unrenderable head revision, a bad flag, an unknown revision).`,
		Example: `  regatta plan --base origin/main
  regatta plan --base origin/main --head HEAD --output markdown . > plan.md
  regatta plan --base v1.4.0 --head main --sops-age-key-file age.key --live`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := optionalDir(args)
			if err == nil {
				err = runPlan(cmd.Context(), f, dir, stdout, stderr)
			}
			return planExit(err)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: ExitFailed, Err: err}
	})
	f.register(cmd)
	return cmd
}

func (f *planFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.base, "base", "", "revision the change starts from, e.g. origin/main (required)")
	fl.StringVar(&f.head, "head", "HEAD", "revision with the change")
	fl.StringVarP(&f.output, "output", "o", diff.FormatText, "output format: text, markdown (a pull request comment) or json")
	fl.StringVar(&f.color, "color", "auto", "colour text output: auto (when stdout is a terminal), always or never")
	fl.StringVar(&f.statusBranch, "status-branch", DefaultStatusBranch, `branch whose status/ gives cluster facts (local, else origin/<branch>; "" uses flags only)`)
	fl.StringVar(&f.kubeVersion, "kubernetes-version", DefaultKubernetesVersion, "Kubernetes version of clusters without status")
	fl.IntVar(&f.warnClusters, "warn-clusters", 10, "warn when a change affects more clusters than this (0: never)")
	fl.IntVar(&f.warnPercent, "warn-percent", 50, "warn when a change affects more than this percentage of the fleet (0: never)")
	fl.IntVar(&f.concurrency, "concurrency", 0, "pairs rendered (clusters compared, with --live) at once (default: 2 × CPUs)")
	fl.BoolVar(&f.live, "live", false, "also compare the head rendering with each cluster (server-side dry-run)")
	fl.StringVar(&f.kubeconfigDir, "kubeconfig-dir", "", "with --live: read <cluster>.yaml, <cluster>.kubeconfig or <cluster> from this folder instead of the repository's kubeconfig Secrets")
	fl.DurationVar(&f.clusterTimeout, "cluster-timeout", 30*time.Second, "with --live: per-request timeout for each cluster")
	fl.StringVar(&f.fleet, "fleet", "", "with --live: the fleet identity of the regatta that applies the repository (its log names it at start), so its inventories are compared")
	fl.BoolVar(&f.allowExec, "allow-kubeconfig-exec", false, "with --live: allow exec credential plugins, auth providers and file references in kubeconfigs")
	f.render.register(fl)
	f.verify.register(fl)
}

// planExit keeps exit code 2 for "something changes": usage errors exit 1
// like every other failure, so that CI can tell them apart.
func planExit(err error) error {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Code == ExitUsage && ee.Err != nil {
		return &ExitError{Code: ExitFailed, Err: ee.Err, Silent: ee.Silent}
	}
	return err
}

func (f *planFlags) check(stdout io.Writer) (diff.WriteOptions, error) {
	opts := diff.WriteOptions{Format: f.output}
	switch {
	case f.base == "":
		return opts, usageError("--base is required (for example --base origin/main)")
	case f.output != diff.FormatText && f.output != diff.FormatMarkdown && f.output != diff.FormatJSON:
		return opts, usageError("--output must be text, markdown or json, got %q", f.output)
	case f.warnClusters < 0 || f.warnPercent < 0 || f.concurrency < 0:
		return opts, usageError("--warn-clusters, --warn-percent and --concurrency must not be negative")
	}
	var err error
	opts.Color, err = useColor(f.color, stdout)
	return opts, err
}

// useColor decides whether text output is coloured.
func useColor(mode string, w io.Writer) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto":
		f, ok := w.(*os.File)
		return ok && os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(f.Fd())), nil
	}
	return false, usageError("--color must be auto, always or never, got %q", mode)
}

func runPlan(ctx context.Context, f *planFlags, dir string, stdout, stderr io.Writer) error {
	wopts, err := f.check(stdout)
	if err != nil {
		return err
	}
	base, err := openRevision(ctx, dir, f.base)
	if err != nil {
		return err
	}
	head, err := openRevision(ctx, dir, f.head)
	if err != nil {
		return err
	}
	vo, err := f.verify.options()
	if err != nil {
		return err
	}
	rep, err := f.plan(ctx, dir, base, head)
	if err != nil {
		return err
	}
	if vo != nil {
		if err := checkSignature(ctx, dir, *vo, base, head, rep); err != nil {
			return err
		}
	}
	if err := diff.Write(stdout, rep, wopts); err != nil {
		return err
	}
	switch {
	case rep.Failed():
		return &ExitError{Code: ExitFailed, Silent: true}
	case rep.Summary.Changed:
		return &ExitError{Code: ExitChanged, Silent: true}
	}
	return nil
}

// revision is one side of the plan, read from Git.
type revision struct {
	ref  string
	tree *repo.Tree
}

func openRevision(ctx context.Context, dir, rev string) (revision, error) {
	t, err := openTree(ctx, dir, rev)
	if err != nil {
		return revision{}, err
	}
	tree, ok := t.(*repo.Tree)
	if !ok {
		return revision{}, fmt.Errorf("revision %s: not a Git tree", rev)
	}
	return revision{ref: rev, tree: tree}, nil
}

func (r revision) rev() diff.Rev { return diff.Rev{Ref: r.ref, Revision: r.tree.Revision()} }

// plan loads both revisions and compares them; an invalid head is
// reported with its errors and nothing else.
func (f *planFlags) plan(ctx context.Context, dir string, base, head revision) (*diff.Report, error) {
	facts := f.loadFacts(ctx, dir)
	var baseFleet *spec.Repository
	var warnings []diff.Warning
	loaded := make(chan struct{})
	go func() { // the two loads are independent: use two cores
		defer close(loaded)
		baseFleet, warnings = loadBase(base)
	}()
	headFleet, diags := spec.Load(head.tree)
	<-loaded
	if len(diags.Errors()) > 0 {
		rep := diff.NewReport(base.rev(), head.rev())
		rep.Errors = diff.ValidationProblems(diags)
		rep.Facts = facts.info(nil)
		return rep, nil
	}
	r, err := f.render.renderer()
	if err != nil {
		return nil, err
	}
	headSide := facts.side(head, headFleet)
	rep, err := diff.Compare(ctx, facts.side(base, baseFleet), headSide, diff.Options{Renderer: r,
		Concurrency: f.concurrency, WarnClusters: f.warnClusters, WarnPercent: f.warnPercent, EventInstances: facts.eventInstances})
	if err != nil {
		return nil, err
	}
	rep.Facts = facts.info(headFleet)
	rep.Warnings = append(append(warnings, diff.ValidationWarnings(diags)...), rep.Warnings...)
	if f.live {
		err = f.compareLive(ctx, headSide, rep, r)
	}
	return rep, err
}

// loadBase loads the base revision. An invalid base is compared as an
// empty fleet, with a warning: everything at head is then new.
func loadBase(base revision) (*spec.Repository, []diff.Warning) {
	fleet, diags := spec.Load(base.tree)
	n := len(diags.Errors())
	if n == 0 {
		return fleet, nil
	}
	return &spec.Repository{FS: base.tree}, []diff.Warning{{Kind: diff.WarnBaseInvalid, Message: fmt.Sprintf(
		"the base revision %s is invalid (%s, first: %s): it is compared as an empty fleet", base.ref, plural(n, "error"), diags.Errors()[0].Error())}}
}

// compareLive dry-runs the head rendering on every cluster.
func (f *planFlags) compareLive(ctx context.Context, head diff.Side, rep *diff.Report, r *render.Renderer) error {
	keys, err := f.render.keyring()
	if err != nil {
		return err
	}
	kc := diff.KubeconfigFromRepository(head.Fleet.FS, keys)
	creds := kubeconfig.NewCredentials(ctx, cloud.Options{})
	if f.kubeconfigDir != "" {
		kc, creds = diff.KubeconfigFromDir(f.kubeconfigDir), nil
	}
	ctrllog.SetLogger(logr.Discard()) // fluxcd/pkg/ssa logs through controller-runtime
	opts := apply.DefaultOptions()
	opts.Client.Timeout, opts.Client.AllowExec = f.clusterTimeout, f.allowExec
	opts.Fleet = apply.Fleet{ID: f.fleet} // never Legacy: a plan adopts (writes) nothing
	if err := opts.Fleet.Validate(); err != nil {
		return usageError("--fleet: %v", err)
	}
	m := apply.NewManager(ctx, opts)
	defer m.Close()
	rep.Live, err = diff.Live(ctx, head, rep, diff.LiveOptions{Renderer: r, Manager: m, Kubeconfig: kc, Credentials: creds, Concurrency: f.concurrency})
	return err
}

// planFacts supplies cluster facts: from the status branch for the
// clusters it knows, else offline from --kubernetes-version.
type planFacts struct {
	version  string
	status   map[string]status.ClusterStatus
	branch   string
	revision string
	why      string // the status branch could not be read
}

func (f *planFlags) loadFacts(ctx context.Context, dir string) planFacts {
	pf := planFacts{version: f.kubeVersion, branch: f.statusBranch}
	if f.statusBranch == "" {
		return pf
	}
	t, err := openStatusTree(ctx, &statusFlags{statusBranch: f.statusBranch}, dir)
	if err != nil {
		pf.why = fmt.Sprintf("no status branch %s (nor origin/%s)", f.statusBranch, f.statusBranch)
		return pf
	}
	snap, err := status.Read(t)
	if err != nil {
		pf.why = fmt.Sprintf("status branch %s is unreadable: %v", f.statusBranch, err)
		return pf
	}
	pf.status = map[string]status.ClusterStatus{}
	for _, c := range snap.Clusters {
		pf.status[c.Cluster] = c
	}
	if tree, ok := t.(*repo.Tree); ok {
		pf.revision = tree.Revision()
	}
	return pf
}

func (pf planFacts) side(r revision, fleet *spec.Repository) diff.Side {
	return diff.Side{Ref: r.ref, Revision: r.tree.Revision(), Fleet: fleet, TreeHash: r.tree.TreeHash,
		Facts: func(c *spec.Cluster) render.ClusterFacts { return pf.facts(fleet, c) }}
}

// facts are a cluster's facts at one revision: the version and the
// deployed-resource classifiers' verdicts from the status branch, the
// labels and version classifiers of the revision.
func (pf planFacts) facts(fleet *spec.Repository, c *spec.Cluster) render.ClusterFacts {
	st, ok := pf.status[c.Metadata.Name]
	if !ok || st.KubernetesVersion == "" {
		facts, _ := classify.Facts(c, pf.version, fleet.Classifiers, nil)
		return facts
	}
	facts, _ := classify.Facts(c, st.KubernetesVersion, fleet.Classifiers, func(cl *spec.Classifier) (bool, bool) {
		_, recorded := st.ClassifierLabels[cl.Metadata.Name]
		return recorded, true
	})
	return facts
}

// info describes the facts used for the report.
func (pf planFacts) info(head *spec.Repository) diff.Facts {
	out := diff.Facts{Source: diff.FactsFlags, KubernetesVersion: pf.version}
	if pf.why != "" {
		out.Notes = append(out.Notes, pf.why)
	}
	if pf.status != nil {
		out.Source, out.StatusBranch, out.StatusRevision = diff.FactsStatusBranch, pf.branch, pf.revision
	}
	if head == nil {
		return out
	}
	for _, c := range head.Clusters {
		if st, ok := pf.status[c.Metadata.Name]; pf.status != nil && (!ok || st.KubernetesVersion == "") {
			out.WithoutStatus = append(out.WithoutStatus, c.Metadata.Name)
		}
	}
	for _, cl := range head.Classifiers {
		if cl.Spec.DeployedResourceConstraint != nil && (pf.status == nil || len(out.WithoutStatus) > 0) {
			out.Notes = append(out.Notes, fmt.Sprintf("classifier %s looks at deployed resources: not evaluated without status", cl.Metadata.Name))
		}
	}
	return out
}
