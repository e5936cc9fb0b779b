package app

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/repo"
)

// DefaultStatusBranch is where status is committed unless --status-branch says otherwise.
const DefaultStatusBranch = "regatta/status"

type statusFlags struct {
	cluster      string
	repoURL      string
	statusBranch string
	output       string
	git          gitFlags
}

func newStatusCommand(stdout io.Writer) *cobra.Command {
	f := &statusFlags{}
	cmd := &cobra.Command{
		Use:   "status [DIR]",
		Short: "Print the fleet dashboard from the status branch",
		Long: `Reads the status regatta committed back into the fleet repository and prints
it: one line per (cluster, profile) pair with its state, revision and first
error, or one cluster in detail with --cluster.

The status is read from the status branch (default regatta/status; a local
branch, else origin/<branch>) of the Git repository in DIR (default "."),
or from a remote repository with --repo. Nothing is written.`,
		Example: `  regatta status
  regatta status --cluster production-eu-1
  regatta status --repo https://git.example.com/platform/fleet-infra.git --output markdown`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := optionalDir(args)
			if err != nil {
				return err
			}
			return runStatus(cmd.Context(), f, dir, stdout)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.cluster, "cluster", "", "show one cluster in detail")
	fl.StringVar(&f.repoURL, "repo", "", "read a remote repository instead of DIR")
	fl.StringVar(&f.statusBranch, "status-branch", DefaultStatusBranch, "branch that holds the status/ folder")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text, markdown or yaml")
	f.git.register(fl)
	return cmd
}

func runStatus(ctx context.Context, f *statusFlags, dir string, stdout io.Writer) error {
	if f.output != "text" && f.output != "markdown" && f.output != "yaml" {
		return usageError("--output must be text, markdown or yaml, got %q", f.output)
	}
	tree, err := openStatusTree(ctx, f, dir)
	if err != nil {
		return err
	}
	snap, err := status.Read(tree)
	if err != nil {
		return err
	}
	if f.output == "yaml" { // YAML quotes control characters itself
		if f.cluster != "" {
			return printClusterStatus(stdout, snap, f.cluster, f.output)
		}
		return writeStatusYAML(stdout, snap)
	}
	// tenants write the texts: a terminal gets none of their escape
	// sequences
	var b strings.Builder
	switch {
	case f.cluster != "":
		err = printClusterStatus(&b, snap, f.cluster, f.output)
	case f.output == "markdown":
		_, err = b.WriteString(status.RenderDashboard(snap))
	default:
		err = writeStatusTable(&b, snap)
	}
	if _, werr := io.WriteString(stdout, status.Printable(b.String())); err == nil {
		err = werr
	}
	return err
}

func openStatusTree(ctx context.Context, f *statusFlags, dir string) (fs.FS, error) {
	if f.repoURL != "" {
		auth, err := f.git.auth()
		if err != nil {
			return nil, err
		}
		src, err := repo.NewSource(repo.Options{URL: f.repoURL, Branch: f.statusBranch, Auth: auth})
		if err != nil {
			return nil, err
		}
		rev, _, err := src.Sync(ctx)
		if err != nil {
			return nil, fmt.Errorf("read status branch %s: %w", f.statusBranch, err)
		}
		return src.Tree(ctx, rev)
	}
	r, err := repo.Open(dir)
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	for _, rev := range []string{f.statusBranch, "origin/" + f.statusBranch} {
		if t, err := r.Tree(ctx, rev); err == nil {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no status branch %s (nor origin/%s) in %s: has regatta run and pushed status yet? (git fetch origin %s)",
		f.statusBranch, f.statusBranch, dir, f.statusBranch)
}

func writeStatusTable(w io.Writer, s status.Snapshot) error {
	fl := s.Fleet
	fmt.Fprintf(w, "source revision %s", status.ShortRevision(fl.SourceRevision))
	if fl.AppliedRevision != "" && fl.AppliedRevision != fl.SourceRevision {
		fmt.Fprintf(w, " (in force: %s)", status.ShortRevision(fl.AppliedRevision))
	}
	fmt.Fprintln(w)
	for _, e := range fl.Errors {
		fmt.Fprintf(w, "  invalid: %s\n", formatStatusError(e))
	}
	for _, t := range fl.RefusedTenants {
		for _, e := range t.Errors {
			fmt.Fprintf(w, "  tenant %s refused: %s\n", t.Tenant, formatStatusError(e))
		}
	}
	if v := fl.Verification; v != nil && v.Accepted {
		fmt.Fprintf(w, "  signature check (%s): accepted, signed by %s %s\n", v.Mode, v.Key, v.Signer)
	}
	writeRolloutsText(w, fl.Rollouts)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	owners := sharded(s.Clusters)
	fmt.Fprintln(tw, ownerCell(owners, "CLUSTER", "OWNER")+"REACHABLE\tVERSION\tPROFILE\tSTATE\tREVISION\tMESSAGE")
	for _, c := range s.Clusters {
		name := ownerCell(owners, c.Cluster, dash(c.Owner))
		reach := fmt.Sprint(c.Reachable)
		if c.Paused {
			reach = "paused"
		}
		if len(c.Profiles) == 0 {
			fmt.Fprintf(tw, "%s%s\t%s\t-\t-\t-\t%s\n", name, reach, dash(c.KubernetesVersion), firstLine(c.Error))
		}
		for _, p := range c.Profiles {
			fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%s\n", name, reach, dash(c.KubernetesVersion),
				p.Name, p.State, status.ShortRevision(p.Revision), firstLine(pairMessage(p)))
		}
	}
	return tw.Flush()
}

func printClusterStatus(w io.Writer, s status.Snapshot, name, output string) error {
	for _, c := range s.Clusters {
		if c.Cluster != name {
			continue
		}
		if output != "text" {
			return writeStatusYAML(w, status.Snapshot{Fleet: s.Fleet, Clusters: []status.ClusterStatus{c}})
		}
		fmt.Fprintf(w, "cluster %s: reachable=%v version=%s revision=%s\n", c.Cluster, c.Reachable, dash(c.KubernetesVersion), status.ShortRevision(c.SourceRevision))
		if c.Owner != "" {
			fmt.Fprintf(w, "  owner: replica %s\n", c.Owner)
		}
		if c.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", c.Error)
		}
		fmt.Fprintf(w, "  labels: %s\n", formatLabels(c.Labels))
		if c.ClassifierLabelsStale {
			fmt.Fprintln(w, "  classifier labels are stale (cluster unreachable): last known values kept")
		}
		for _, n := range c.LabelNotes {
			fmt.Fprintf(w, "  label %s %s: %s\n", n.Key, n.Reason, n.Message)
		}
		for _, e := range c.ClassifierErrors {
			fmt.Fprintf(w, "  classifier %s failed (last result kept): %s\n", e.Classifier, e.Message)
		}
		printHealthChecks(w, c.HealthChecks)
		for _, p := range c.Profiles {
			fmt.Fprintf(w, "  profile %s: %s revision=%s objects=%d", p.Name, p.State, status.ShortRevision(p.Revision), p.Objects)
			if p.DriftCorrections > 0 {
				fmt.Fprintf(w, " driftCorrections=%d", p.DriftCorrections)
			}
			fmt.Fprintln(w)
			if m := pairMessage(p); m != "" {
				fmt.Fprintf(w, "    %s\n", m)
			}
		}
		return nil
	}
	return &ExitError{Code: ExitFailed, Err: fmt.Errorf("no status for cluster %q", name)}
}

// printHealthChecks writes a cluster's health checks: each with its
// counts, or why it could not run, and the resources it reported.
func printHealthChecks(w io.Writer, hcs []status.HealthCheck) {
	for _, h := range hcs {
		fmt.Fprintf(w, "  health check %s/%s: ", h.Alert, h.Check)
		if h.Error != "" {
			fmt.Fprintf(w, "error: %s\n", h.Error)
			continue
		}
		fmt.Fprintf(w, "%d objects, %d Degraded\n", h.Objects, h.Degraded)
		for _, r := range h.Resources {
			fmt.Fprintf(w, "    %s %s: %s\n", r.Status, r.Object, r.Message)
		}
	}
}

func writeStatusYAML(w io.Writer, s status.Snapshot) error {
	files, err := status.Files(s)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		if strings.HasSuffix(n, ".yaml") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for i, n := range names {
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		fmt.Fprintf(w, "# %s\n%s", n, files[n])
	}
	return nil
}

func pairMessage(p status.Profile) string {
	if p.Error != nil {
		return formatStatusError(*p.Error)
	}
	return p.Message
}

func formatStatusError(e status.Error) string {
	var where []string
	if e.File != "" {
		if e.Line > 0 {
			where = append(where, fmt.Sprintf("%s:%d", e.File, e.Line))
		} else {
			where = append(where, e.File)
		}
	}
	if e.Object != "" {
		where = append(where, e.Object)
	}
	if len(where) == 0 {
		return e.Message
	}
	return strings.Join(where, " ") + ": " + e.Message
}

func formatLabels(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + l[k]
	}
	return strings.Join(parts, ",")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// sharded reports whether replicas share the fleet: some record names the
// replica that owns its cluster.
func sharded(cs []status.ClusterStatus) bool {
	for _, c := range cs {
		if c.Owner != "" {
			return true
		}
	}
	return false
}

// ownerCell is the table's first cells: the cluster, and its owner when
// the fleet is sharded.
func ownerCell(owners bool, cluster, owner string) string {
	if owners {
		return cluster + "\t" + owner + "\t"
	}
	return cluster + "\t"
}
