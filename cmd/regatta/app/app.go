// Package app holds regatta's command-line interface: one cobra command per
// subcommand, each with its own flags struct, wired to the library packages.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes shared by every subcommand.
const (
	ExitOK      = 0
	ExitFailed  = 1 // invalid input, failed render, unconverged pass
	ExitUsage   = 2 // bad flags or arguments, unreadable files
	ExitChanged = 2 // regatta plan: something changes
)

// ExitError carries a specific exit code out of a command. Its message, if
// any, has already been printed when Silent is set.
type ExitError struct {
	Code   int
	Err    error
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageError marks errors in flags or arguments (exit code 2).
func usageError(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// Main runs regatta with the given arguments and returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := Run(ctx, args, stdout, stderr)
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if !ee.Silent && ee.Err != nil {
			fmt.Fprintln(stderr, "error:", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintln(stderr, "error:", err)
	return ExitFailed
}

// Run builds the command tree and executes it.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := NewRootCommand(stdout, stderr)
	cmd.SetArgs(args)
	return cmd.ExecuteContext(ctx)
}

// NewRootCommand returns the regatta command with every subcommand.
func NewRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "regatta",
		Short: "GitOps fleet reconciler: one Git repository, many Kubernetes clusters",
		Long: `regatta follows a fleet-infra Git repository and keeps many Kubernetes
clusters in the state it describes: clusters/ say where each cluster is and
what labels it has, profiles/ say what to deploy where, classifiers/ derive
labels from live cluster state.

Every flag can also be set with an environment variable: --foo-bar is
REGATTA_FOO_BAR. Flags on the command line win.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return bindEnv(cmd.Flags())
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: err}
	})
	root.AddCommand(
		newVersionCommand(stdout),
		newValidateCommand(stdout, stderr),
		newStatusCommand(stdout),
		newUICommand(stderr),
		newRenderCommand(stdout, stderr),
		newRunCommand(stdout, stderr),
		newPlanCommand(stdout, stderr),
		newImportCommand(stdout, stderr),
		newHelmWorkerCommand(),
		newRenderWorkerCommand(),
		newCodeownersCommand(stdout, stderr),
		newReleaseAgentCommand(stdout),
	)
	return root
}

// bindEnv sets every flag not given on the command line from REGATTA_<NAME>.
func bindEnv(flags *pflag.FlagSet) error {
	var err error
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil {
			return
		}
		name := "REGATTA_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok {
			if e := flags.Set(f.Name, v); e != nil {
				err = usageError("%s=%q: %v", name, v, e)
			}
		}
	})
	return err
}

// optionalDir returns the single optional directory argument, default ".".
func optionalDir(args []string) (string, error) {
	switch len(args) {
	case 0:
		return ".", nil
	case 1:
		return args[0], nil
	}
	return "", usageError("expected at most one directory, got %d arguments", len(args))
}
