package app

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/regatta-dev/regatta/migrate/sveltos"
)

type importSveltosFlags struct {
	out    string
	source string
}

func newImportSveltosCommand(stdout, stderr io.Writer) *cobra.Command {
	f := &importSveltosFlags{}
	cmd := &cobra.Command{
		Use:   "sveltos FILE...",
		Short: "Import Sveltos ClusterProfiles, Profiles, Classifiers, EventSources, EventTriggers and ClusterHealthChecks",
		Long: `Reads Sveltos manifests from the files and folders given: ClusterProfiles and
Profiles become profiles (policyRefs, helmCharts and kustomizationRefs become
add-ons, validateHealths health checks, driftExclusions and patches carry
over), Classifiers become classifiers, EventSources event sources
(events/) and EventTriggers event profiles, ClusterHealthChecks alerts
(alerts/: their Addons liveness checks and notifications; the report names
the Secret keys to rename; Lua HealthChecks are reported), SveltosClusters
and Cluster API Clusters become clusters with their labels. Give the ConfigMaps and Secrets
the profiles reference as files too: their manifests are written into the
fleet under sveltos-policies/, and their Helm values inlined. Refs to Flux
sources (GitRepository, OCIRepository, Bucket) name paths of --source, a
checkout of that source, which is copied into the fleet's sveltos-source/.

Like Sveltos, add-ons are applied without waiting for health (wait: false)
unless the profile has validateHealths or a chart sets options.wait.
Exit codes: 0 imported, 1 failed, 2 usage error.`,
		Example: `  regatta import sveltos clusterprofiles/ configmaps/ --out ./fleet
  regatta import sveltos profile.yaml --source ./flux-source --out ./fleet`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("expected at least one file or folder of Sveltos manifests")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.out == "" {
				return usageError("--out is required")
			}
			files := args
			if f.source != "" {
				files = append([]string{f.source}, args...)
			}
			if err := checkFiles(files); err != nil {
				return err
			}
			res, err := sveltos.Run(cmd.Context(), sveltos.Options{Files: args, Source: f.source, Out: f.out})
			if err != nil {
				return err
			}
			return writeImport(stdout, stderr, res.Files, res.Report)
		},
	}
	cmd.Flags().StringVar(&f.out, "out", "", "write the fleet into this folder (required)")
	cmd.Flags().StringVar(&f.source, "source", "", "a checkout of the Flux source that policyRefs and kustomizationRefs name paths of")
	return cmd
}
