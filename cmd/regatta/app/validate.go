package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

type validateFlags struct {
	output string
	// helmWorker and programWorker bound the tenant charts and Jsonnet
	// and ytt programs validate renders, and allowURLPrefixes is the URL
	// policy, as the daemon's flags of the same names do.
	helmWorker       helmWorkerFlags
	programWorker    programWorkerFlags
	allowURLPrefixes []string
	// plainHTTP: registries are asked over HTTP, so an http://
	// --allow-url-prefix names them as it does for the daemon.
	plainHTTP bool
}

func newValidateCommand(stdout, stderr io.Writer) *cobra.Command {
	f := &validateFlags{}
	cmd := &cobra.Command{
		Use:   "validate [DIR]",
		Short: "Check a fleet repository's clusters, profiles and classifiers",
		Long: `Loads and validates the fleet repository in DIR (default: the current
directory) and prints every problem, one per line, as file:line: field: message.
It reads the working tree as it is and writes nothing. Tenants' profiles
are rendered offline, their charts and Jsonnet and ytt programs in worker
processes bounded as render's and the daemon's are (--helm-render-*,
--program-render-*), and what the daemon would refuse is an error.

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
	f.helmWorker.register(cmd.Flags())
	f.programWorker.register(cmd.Flags())
	registerAllowURLPrefix(cmd.Flags(), &f.allowURLPrefixes)
	cmd.Flags().BoolVar(&f.plainHTTP, "helm-plain-http", false, "registries are asked over plain HTTP, as the daemon's flag says (validate fetches nothing; an http:// --allow-url-prefix then names them)")
	return cmd
}

func runValidate(ctx context.Context, f *validateFlags, dir string, stdout, stderr io.Writer) error {
	if f.output != "text" && f.output != "json" {
		return usageError("--output must be text or json, got %q", f.output)
	}
	r, done, err := offlineRenderer(f)
	if err != nil {
		return err
	}
	defer done()
	fsys, err := openDir(dir)
	if err != nil {
		return err
	}
	repo, diags, verdict := spec.Admit(fsys)
	diags = append(diags, checkTemplates(fsys, repo)...)
	diags = append(diags, checkTenants(ctx, fsys, repo, diags, r)...)
	diags = append(diags, checkClusterScopes(ctx, fsys, repo, diags, r)...)
	if f.output == "json" {
		err = writeValidateJSON(stdout, repo, diags, verdict)
	} else {
		err = writeValidateText(stdout, stderr, repo, diags, verdict)
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

func writeValidateText(stdout, stderr io.Writer, repo *spec.Repository, diags spec.Diagnostics, v spec.Verdict) error {
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
	if err == nil && errs > 0 {
		_, err = fmt.Fprintln(stderr, daemonVerdict(v))
	}
	return err
}

// daemonVerdict says what the daemon does with the revision (spec.Admit,
// docs/operations.md "What keeps a revision out").
func daemonVerdict(v spec.Verdict) string {
	if !v.Admitted() {
		return fmt.Sprintf("the daemon keeps this revision out (%s outside tenants' folders); the last good revision stays in force",
			plural(len(v.KeptOut), "error"))
	}
	msg := "the daemon takes this revision"
	if names := refusedNames(v); len(names) > 0 {
		msg += "; it refuses tenant " + strings.Join(names, ", ") + " (folder does not load: its profiles keep their last good state)"
	}
	return msg + "; the pairs whose render fails are refused one by one"
}

func refusedNames(v spec.Verdict) []string {
	out := []string{}
	for _, t := range v.Refused {
		out = append(out, t.Name)
	}
	return out
}

type validateReport struct {
	Valid       bool              `json:"valid"`
	Clusters    int               `json:"clusters"`
	Profiles    int               `json:"profiles"`
	Classifiers int               `json:"classifiers"`
	Errors      []spec.Diagnostic `json:"errors"`
	Warnings    []spec.Diagnostic `json:"warnings"`
	// Admitted and RefusedTenants are what the daemon does with the
	// revision (spec.Admit): take it or keep it out, and which tenants'
	// profiles it refuses.
	Admitted       bool     `json:"admitted"`
	RefusedTenants []string `json:"refusedTenants"`
}

func writeValidateJSON(w io.Writer, repo *spec.Repository, diags spec.Diagnostics, v spec.Verdict) error {
	r := validateReport{
		Valid:       len(diags.Errors()) == 0,
		Clusters:    len(repo.Clusters),
		Profiles:    len(repo.Profiles),
		Classifiers: len(repo.Classifiers),
		Errors:      nonNil(diags.Errors()),
		Warnings:    nonNil(diags.Warnings()),

		Admitted:       v.Admitted(),
		RefusedTenants: refusedNames(v),
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
