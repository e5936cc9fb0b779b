package app

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
)

// Set at link time by the Makefile:
// -X github.com/regatta-dev/regatta/cmd/regatta/app.version=...
var (
	version = "dev"
	commit  = "unknown"
)

func newVersionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print regatta's version and Git commit",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(stdout, "regatta %s (commit %s, %s, %s/%s)\n",
				version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
