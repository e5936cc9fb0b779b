package spec

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"

	"github.com/Masterminds/semver/v3"
	yaml "go.yaml.in/yaml/v3"
)

// varName is the form of a substitution variable name, as in Flux.
var varName = regexp.MustCompile(`^[_[:alpha:]][_[:alpha:][:digit:]]*$`)

// IsVarName reports whether s can be a ${var} substitution variable.
func IsVarName(s string) bool { return varName.MatchString(s) }

// checkFluxFields validates the Flux-compatible fields of an add-on:
// postBuild, valuesFrom, and chartVersion against an in-repository chart.
func checkFluxFields(fsys fs.FS, a Addon, field string, rep report) {
	if pb := a.PostBuild; pb != nil {
		if a.Helm != nil {
			rep.errorf(field+".postBuild", "substitution applies to kustomize and manifests add-ons, not to Helm charts")
		}
		for _, k := range slices.Sorted(maps.Keys(pb.Substitute)) {
			if !IsVarName(k) {
				rep.errorf(field+".postBuild.substitute", "%q is not a variable name (letters, digits and _, not starting with a digit)", k)
			}
		}
		for i, r := range pb.SubstituteFrom {
			f := fmt.Sprintf("%s.postBuild.substituteFrom[%d]", field, i)
			checkDataReference(fsys, r, f, rep)
			if r.ValuesKey != "" || r.TargetPath != "" {
				rep.errorf(f, "valuesKey and targetPath belong to helm.valuesFrom; substituteFrom uses every key")
			}
		}
	}
	h := a.Helm
	if h == nil {
		return
	}
	for i, r := range h.ValuesFrom {
		checkDataReference(fsys, r, fmt.Sprintf("%s.helm.valuesFrom[%d]", field, i), rep)
	}
	if h.Path != "" && h.ChartVersion != "" && !IsTemplated(h.Path) {
		checkPathChartVersion(fsys, h, field+".helm", rep)
	}
}

func checkDataReference(fsys fs.FS, r DataReference, field string, rep report) {
	checkEnum(rep, field+".kind", r.Kind, "ConfigMap", "Secret")
	if r.Name == "" {
		rep.errorf(field+".name", "required")
	}
	if r.Optional && r.Path != "" && !IsTemplated(r.Path) && !exists(fsys, r.Path) {
		return
	}
	checkRepoPath(fsys, rep, field+".path", r.Path, pathFile)
}

// checkPathChartVersion reports a chartVersion that the chart folder's
// Chart.yaml version does not satisfy.
func checkPathChartVersion(fsys fs.FS, h *HelmSource, field string, rep report) {
	resolved, err := ResolvePath(fsys, h.Path)
	if err != nil {
		return // reported by the path check
	}
	data, err := fs.ReadFile(fsys, path.Join(resolved, "Chart.yaml"))
	if err != nil {
		return
	}
	var meta struct {
		Version string `yaml:"version"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		rep.errorf(field+".path", "%s/Chart.yaml: %v", h.Path, err)
		return
	}
	if err := ChartVersionMatches(h.ChartVersion, meta.Version); err != nil {
		rep.errorf(field+".chartVersion", "%v (from %s/Chart.yaml)", err, h.Path)
	}
}

// ChartVersionMatches checks a chart's version against a chartVersion
// that is an exact version or a semver range.
func ChartVersionMatches(want, have string) error {
	c, err := semver.NewConstraint(want)
	if err != nil {
		return fmt.Errorf("%q is neither a version nor a semver range: %w", want, err)
	}
	v, err := semver.NewVersion(have)
	if err != nil {
		return fmt.Errorf("chart version %q is not a semantic version", have)
	}
	if !c.Check(v) {
		return fmt.Errorf("chart version %s does not match %q", have, want)
	}
	return nil
}
