package app

import (
	"io"

	"github.com/spf13/cobra"
)

func newImportSveltosCommand(stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{Use: "sveltos FILE...", Hidden: true}
}
