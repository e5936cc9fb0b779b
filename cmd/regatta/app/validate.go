package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

type validateFlags struct {
	output string
}

func newValidateCommand(stdout, stderr io.Writer) *cobra.Command {
	f := &validateFlags{}
	cmd := &cobra.Command{
		Use:   "validate [DIR]",
		Short: "Check a fleet repository's clusters, profiles and classifiers",
		Long: `Loads and validates the fleet repository in DIR (default: the current
directory) and prints every problem, one per line, as file:line: field: message.
It reads the working tree as it is and writes nothing.

Exit codes: 0 valid (warnings may be printed), 1 invalid, 2 usage or I/O error.`,
		Example: `  regatta validate
  regatta validate ./fleet-infra --output json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := optionalDir(args)
			if err != nil {
				return err
			}
			return runValidate(cmd.Context(), f, dir, stdout, stderr)
		},
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	return cmd
}

func runValidate(ctx context.Context, f *validateFlags, dir string, stdout, stderr io.Writer) error {
	if f.output != "text" && f.output != "json" {
		return usageError("--output must be text or json, got %q", f.output)
	}
	fsys, err := openDir(dir)
	if err != nil {
		return err
	}
	repo, diags := spec.Load(fsys)
	diags = append(diags, checkTemplates(fsys, repo)...)
	diags = append(diags, checkTenants(ctx, fsys, repo, diags)...)
	diags = append(diags, checkClusterScopes(ctx, fsys, repo, diags)...)
	if f.output == "json" {
		err = writeValidateJSON(stdout, repo, diags)
	} else {
		err = writeValidateText(stdout, stderr, repo, diags)
	}
	if err != nil {
		return err
	}
	if len(diags.Errors()) > 0 {
		return &ExitError{Code: ExitFailed, Silent: true}
	}
	return nil
}

// checkTemplates checks the profiles' templates as far as they can be
// without a cluster: parse errors and literal bombs (render.CheckTemplates),
// chart templates included (checkCharts).
func checkTemplates(fsys fs.FS, repo *spec.Repository) spec.Diagnostics {
	r := render.New(render.Options{})
	var out spec.Diagnostics
	for _, p := range repo.Profiles {
		out = append(out, r.CheckTemplates(fsys, p)...)
	}
	return append(out, checkCharts(fsys, repo)...)
}

// openDir opens a repository working tree, failing with a usage error when
// it is not a readable directory. The tree is an os.Root, so no file read
// through it can leave the directory, symlinks included.
func openDir(dir string) (fs.FS, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	if !info.IsDir() {
		return nil, usageError("%s is not a directory", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	return root.FS(), nil
}

func writeValidateText(stdout, stderr io.Writer, repo *spec.Repository, diags spec.Diagnostics) error {
	for _, d := range diags {
		prefix := ""
		if d.Severity == spec.SeverityWarning {
			prefix = "warning: "
		}
		if _, err := fmt.Fprintln(stdout, prefix+d.Error()); err != nil {
			return err
		}
	}
	errs, warns := len(diags.Errors()), len(diags.Warnings())
	verdict := "valid"
	if errs > 0 {
		verdict = fmt.Sprintf("invalid: %s", plural(errs, "error"))
	}
	_, err := fmt.Fprintf(stderr, "%s, %s, %s: %s, %s\n",
		plural(len(repo.Clusters), "cluster"), plural(len(repo.Profiles), "profile"),
		plural(len(repo.Classifiers), "classifier"), verdict, plural(warns, "warning"))
	return err
}

type validateReport struct {
	Valid       bool              `json:"valid"`
	Clusters    int               `json:"clusters"`
	Profiles    int               `json:"profiles"`
	Classifiers int               `json:"classifiers"`
	Errors      []spec.Diagnostic `json:"errors"`
	Warnings    []spec.Diagnostic `json:"warnings"`
}

func writeValidateJSON(w io.Writer, repo *spec.Repository, diags spec.Diagnostics) error {
	r := validateReport{
		Valid:       len(diags.Errors()) == 0,
		Clusters:    len(repo.Clusters),
		Profiles:    len(repo.Profiles),
		Classifiers: len(repo.Classifiers),
		Errors:      nonNil(diags.Errors()),
		Warnings:    nonNil(diags.Warnings()),
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func nonNil(ds spec.Diagnostics) []spec.Diagnostic {
	if ds == nil {
		return []spec.Diagnostic{}
	}
	return ds
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
