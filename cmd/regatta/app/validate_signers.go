package app

import (
	"io/fs"

	"github.com/regatta-dev/regatta/spec"
	"github.com/regatta-dev/regatta/verify"
)

// checkSigners validates the signers policy (--signers-policy) and the
// trusted keys (--trusted-keys) as `regatta run` would load them, and
// warns of policy globs that match no file of the repository.
func checkSigners(fsys fs.FS, policyFile, keysDir string) spec.Diagnostics {
	var out spec.Diagnostics
	if keysDir != "" {
		if _, err := verify.LoadKeys(keysDir); err != nil {
			out = append(out, spec.Diagnostic{Severity: spec.SeverityError, File: keysDir, Message: err.Error()})
		}
	}
	if policyFile == "" {
		return out
	}
	p, err := verify.LoadPolicy(policyFile)
	if err != nil {
		for _, e := range verify.PolicyErrors(err) {
			out = append(out, policyDiagnostic(spec.SeverityError, e))
		}
		return out
	}
	var files []string
	_ = fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
		case d.IsDir() && d.Name() == ".git":
			return fs.SkipDir
		case !d.IsDir():
			files = append(files, path)
		}
		return nil
	})
	for _, e := range p.UnusedGlobs(files) {
		out = append(out, policyDiagnostic(spec.SeverityWarning, e))
	}
	return out
}

func policyDiagnostic(sev spec.Severity, e *verify.PolicyError) spec.Diagnostic {
	file := e.File
	if file == "" {
		file = "signers policy"
	}
	return spec.Diagnostic{Severity: sev, File: file, Line: e.Line, Field: e.Field, Message: e.Message}
}
