package app

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
)

// Set at link time by the Makefile (a release stamps all three; date is
// the commit's date, so that a rebuild of one commit is identical):
// -X github.com/regatta-dev/regatta/cmd/regatta/app.version=...
var (
	version = "dev"
	commit  = "unknown"
	date    = "unknown"
)

func newVersionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print regatta's version, Git commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(stdout, "regatta %s (commit %s, built %s, %s, %s/%s)\n",
				version, commit, date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
