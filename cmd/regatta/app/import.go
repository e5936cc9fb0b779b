package app

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/migrate/flux"
)

type importFlags struct {
	out     string
	offline bool
}

func newImportCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Turn a Flux or Sveltos repository into a regatta fleet",
		Long: `Reads another tool's repository and writes the regatta fleet that deploys the
same objects: clusters/<name>/cluster.yaml, profiles/, classifiers/ and alerts/. It
prints a report of every field it could not carry over, as file:line: field:
message. Running it again gives the same files.`,
	}
	cmd.AddCommand(newImportFluxCommand(stdout, stderr), newImportSveltosCommand(stdout, stderr))
	return cmd
}

func newImportFluxCommand(stdout, stderr io.Writer) *cobra.Command {
	f := &importFlags{}
	cmd := &cobra.Command{
		Use:   "flux DIR",
		Short: "Import a Flux repository (clusters/<name>/ with Kustomizations and HelmReleases)",
		Long: `Reads the Flux repository in DIR: one folder per cluster under clusters/, with
Kustomizations, HelmReleases and their sources (GitRepository, OCIRepository,
HelmRepository, ArtifactGenerator) in those folders or in what they build.
Each Kustomization is built as Flux would for each cluster and becomes a
profile (clusters that differ get overlays, or profiles of their own); each
HelmRelease a helm add-on with its merged values; each Alert, with its
Provider, an alert (alerts/) watching the profiles made of its event
sources (the report says which Provider types and fields are not carried
and which Secret keys to rename). Clusters are labelled
cluster=<name>, and env=production (staging, dev...) when the folder name or
the cluster's Kustomization paths say so. See docs/import.md.

Without --out the fleet is written into DIR itself; with --out, DIR's files
are copied there first. A Kustomization of an OCIRepository is built from
the pulled artifact (with the login of its secretRef when that Secret's
manifest is in DIR); when the artifact cannot be pulled, or with --offline,
it is carried over unbuilt, as declared, and the report says so. Exit codes: 0 imported, 1 failed, 2 usage error.`,
		Example: `  regatta import flux ./fleet-infra
  regatta import flux ./flux-repo --out ./regatta-fleet && regatta validate ./regatta-fleet`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("expected one directory, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := openDir(args[0]); err != nil {
				return err
			}
			res, err := flux.Run(cmd.Context(), flux.Options{Dir: args[0], Out: f.out, Pull: flux.Pull{Offline: f.offline}})
			if err != nil {
				return err
			}
			return writeImport(stdout, stderr, res.Files, res.Report)
		},
	}
	cmd.Flags().StringVar(&f.out, "out", "", "write the fleet into this folder (default: DIR)")
	cmd.Flags().BoolVar(&f.offline, "offline", false, "pull no OCI artifact: carry Kustomizations of OCIRepository sources over as declared, unbuilt")
	return cmd
}

// checkFiles fails with a usage error when a file argument is unreadable.
func checkFiles(paths []string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
	}
	return nil
}

// writeImport prints the report on stdout and a summary on stderr.
func writeImport(stdout, stderr io.Writer, files []string, report *migrate.Report) error {
	if err := report.Write(stdout); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stderr, "wrote %s; %s not carried over (listed above)\n",
		plural(len(files), "file"), plural(len(report.Findings()), "finding"))
	return err
}
