package spec

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/yuin/gopher-lua/parse"
	"k8s.io/apimachinery/pkg/util/validation"
)

func validateClassifier(c *Classifier, rep report) {
	s := &c.Spec
	checkName(rep, c.Metadata.Name, fileStem(c.Source.File), "file")
	if len(s.ClassifierLabels) == 0 {
		rep.errorf("spec.classifierLabels", "at least one label is required")
	}
	checkLabels(rep, "spec.classifierLabels", s.ClassifierLabels)
	if len(s.KubernetesVersionConstraints) == 0 && s.DeployedResourceConstraint == nil {
		rep.errorf("spec", "set kubernetesVersionConstraints, deployedResourceConstraint or both")
	}
	for i, vc := range s.KubernetesVersionConstraints {
		field := fmt.Sprintf("spec.kubernetesVersionConstraints[%d]", i)
		checkEnum(rep, field+".comparison", vc.Comparison, CompareEqual, CompareNotEqual,
			CompareGreaterThan, CompareGreaterThanOrEqualTo, CompareLessThan, CompareLessThanOrEqualTo)
		if _, err := ParseVersion(vc.Version); err != nil {
			rep.errorf(field+".version", "%q is not a semantic version such as 1.37.0", vc.Version)
		}
	}
	if r := versionRangeOf(c); !r.overlaps(r) {
		rep.errorf("spec.kubernetesVersionConstraints", "the constraints can never all hold: no version is %s", r)
	}
	if d := s.DeployedResourceConstraint; d != nil {
		checkDeployedResources(d, rep)
	}
}

func checkDeployedResources(d *DeployedResourceConstraint, rep report) {
	field := "spec.deployedResourceConstraint"
	if len(d.ResourceSelectors) == 0 {
		rep.errorf(field+".resourceSelectors", "at least one resource selector is required")
	}
	for i, rs := range d.ResourceSelectors {
		f := fmt.Sprintf("%s.resourceSelectors[%d]", field, i)
		if rs.Version == "" {
			rep.errorf(f+".version", "required (v1 for core kinds)")
		}
		if rs.Kind == "" {
			rep.errorf(f+".kind", "required")
		}
		for j, lf := range rs.LabelFilters {
			lff := fmt.Sprintf("%s.labelFilters[%d]", f, j)
			checkEnum(rep, lff+".operation", lf.Operation, LabelFilterEqual, LabelFilterDifferent)
			for _, msg := range validation.IsQualifiedName(lf.Key) {
				rep.errorf(lff+".key", "%q: %s", lf.Key, msg)
			}
		}
		checkLua(rep, f+".evaluate", rs.Evaluate)
	}
	checkLua(rep, field+".aggregatedClassification", d.AggregatedClassification)
}

// checkLua reports a Lua syntax error at its line in the file: a block
// scalar's first script line is the line after its field.
func checkLua(rep report, field, script string) {
	msg, line := luaSyntaxError(script, field)
	switch {
	case msg == "":
	case line < 0:
		rep.errorf(field, "Lua syntax error: %s", msg)
	case line == 0:
		rep.errorf(field, "Lua syntax error at the end of the script: %s", msg)
	default:
		d := Diagnostic{
			File:    rep.src.File,
			Line:    rep.src.LineOf(field) + line,
			Field:   field,
			Message: fmt.Sprintf("Lua syntax error in script line %d %s", line, msg),
		}
		*rep.diags = append(*rep.diags, d)
	}
}

// luaSyntaxError parses script and describes its first syntax error
// (`near "x": message`) and the line of it: 0 at the end of the script,
// -1 when unknown. msg is "" when the script parses.
func luaSyntaxError(script, name string) (msg string, line int) {
	if script == "" {
		return "", 0
	}
	_, err := parse.Parse(strings.NewReader(script), name)
	if err == nil {
		return "", 0
	}
	var perr *parse.Error
	if !errors.As(err, &perr) {
		return strings.TrimSpace(err.Error()), -1
	}
	if perr.Pos.Line <= 0 {
		return perr.Message, 0
	}
	return fmt.Sprintf("near %q: %s", perr.Token, perr.Message), perr.Pos.Line
}

// ParseVersion parses a Kubernetes version such as v1.37.2 or 1.37.2-eks-1;
// pre-release and build suffixes of distributions are dropped.
func ParseVersion(s string) (*semver.Version, error) {
	v, err := semver.NewVersion(s)
	if err != nil {
		return nil, err
	}
	core, _ := semver.NewVersion(fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Patch()))
	return core, nil
}

// checkDependencyCycles reports every dependsOn cycle once, naming it.
func checkDependencyCycles(r *Repository, diags *Diagnostics) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(p *Profile)
	visit = func(p *Profile) {
		name := p.Metadata.Name
		state[name] = visiting
		stack = append(stack, name)
		for _, d := range p.Spec.DependsOn {
			dep := r.Profile(d)
			switch {
			case dep == nil || d == name:
			case state[d] == visiting:
				reportCycle(r, stack, d, diags)
			case state[d] == unvisited:
				visit(dep)
			}
		}
		stack = stack[:len(stack)-1]
		state[name] = done
	}
	for _, p := range r.Profiles {
		if state[p.Metadata.Name] == unvisited {
			visit(p)
		}
	}
}

func reportCycle(r *Repository, stack []string, back string, diags *Diagnostics) {
	i := len(stack) - 1
	for stack[i] != back {
		i--
	}
	cycle := append(append([]string{}, stack[i:]...), back)
	p := r.Profile(stack[len(stack)-1])
	field := "spec.dependsOn"
	for j, d := range p.Spec.DependsOn {
		if d == back {
			field = fmt.Sprintf("spec.dependsOn[%d]", j)
		}
	}
	report{src: &p.Source, diags: diags}.errorf(field, "dependency cycle: %s", strings.Join(cycle, " -> "))
}

// checkClassifierConflicts warns about two classifiers that can set one
// label key to different values on the same cluster. Classifiers whose
// Kubernetes version ranges cannot overlap never conflict.
func checkClassifierConflicts(r *Repository, diags *Diagnostics) {
	cs := r.Classifiers
	for i := range cs {
		for j := i + 1; j < len(cs); j++ {
			a, b := cs[i], cs[j]
			keys := conflictingKeys(a.Spec.ClassifierLabels, b.Spec.ClassifierLabels)
			if len(keys) == 0 || !versionRangeOf(a).overlaps(versionRangeOf(b)) {
				continue
			}
			for _, k := range keys {
				report{src: &b.Source, diags: diags}.warnf("spec.classifierLabels."+k,
					"classifier %q can also match and sets %s=%s, this one sets %s=%s: a cluster matching both reports a conflict",
					a.Metadata.Name, k, a.Spec.ClassifierLabels[k], k, b.Spec.ClassifierLabels[k])
			}
		}
	}
}

func conflictingKeys(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; ok && w != v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
