package helm

import (
	"slices"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// buildSteps orders rendered files: pre hooks by weight, the main step
// (CRDs, then Helm's install order), post hooks by weight and, with tests,
// test hooks by weight as further post steps. Empty steps are left out.
func buildSteps(chartName string, out *rendered, tests bool) ([]Step, error) {
	files := out.Files
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, templateError(chartName, err)
	}
	main, err := mainStep(chartName, out.CRDs, manifests)
	if err != nil {
		return nil, err
	}
	pre, post, err := hookSteps(chartName, hooks)
	if err != nil {
		return nil, err
	}
	steps := append(pre, main)
	steps = append(steps, post...)
	if tests {
		t, err := testSteps(chartName, hooks)
		if err != nil {
			return nil, err
		}
		steps = append(steps, t...)
	}
	return dropEmpty(steps), nil
}

func mainStep(chartName string, crds []crdFile, manifests []releaseutil.Manifest) (Step, error) {
	step := Step{Phase: PhaseMain}
	for _, crd := range crds {
		objs, err := decodeObjects(chartRelative(chartName, crd.Name), crd.Data)
		if err != nil {
			return Step{}, err
		}
		step.Objects = append(step.Objects, objs...)
	}
	for _, m := range manifests {
		objs, err := decodeObjects(chartRelative(chartName, m.Name), []byte(m.Content))
		if err != nil {
			return Step{}, err
		}
		step.Objects = append(step.Objects, objs...)
	}
	return step, nil
}

// hookSteps groups install/upgrade hooks by phase and weight, in Helm's
// execution order (weight, then name, then kind). A hook for both
// pre-install and post-install appears in both phases.
func hookSteps(chartName string, hooks []*release.Hook) (pre, post []Step, err error) {
	sort.SliceStable(hooks, func(i, j int) bool {
		if hooks[i].Weight != hooks[j].Weight {
			return hooks[i].Weight < hooks[j].Weight
		}
		return hooks[i].Name < hooks[j].Name
	})
	for _, h := range hooks {
		isPre, isPost := hookPhases(h.Events)
		if isPre {
			if pre, err = appendHook(pre, PhasePre, chartName, h); err != nil {
				return nil, nil, err
			}
		}
		if isPost {
			if post, err = appendHook(post, PhasePost, chartName, h); err != nil {
				return nil, nil, err
			}
		}
	}
	return pre, post, nil
}

// testSteps groups the test hooks by weight (hooks are sorted already).
func testSteps(chartName string, hooks []*release.Hook) (steps []Step, err error) {
	for _, h := range hooks {
		if !slices.Contains(h.Events, release.HookTest) {
			continue
		}
		// A new step even on an equal weight, so tests come after post hooks.
		if n := len(steps); n == 0 || steps[n-1].Weight != h.Weight {
			steps = append(steps, Step{Phase: PhasePost, Weight: h.Weight})
		}
		objs, err := decodeObjects(chartRelative(chartName, h.Path), []byte(h.Manifest))
		if err != nil {
			return nil, err
		}
		last := &steps[len(steps)-1]
		last.Objects = append(last.Objects, objs...)
	}
	return steps, nil
}

func hookPhases(events []release.HookEvent) (isPre, isPost bool) {
	for _, e := range events {
		switch e {
		case release.HookPreInstall, release.HookPreUpgrade:
			isPre = true
		case release.HookPostInstall, release.HookPostUpgrade:
			isPost = true
		}
	}
	return isPre, isPost
}

func appendHook(steps []Step, phase Phase, chartName string, h *release.Hook) ([]Step, error) {
	objs, err := decodeObjects(chartRelative(chartName, h.Path), []byte(h.Manifest))
	if err != nil {
		return nil, err
	}
	if n := len(steps); n == 0 || steps[n-1].Weight != h.Weight {
		steps = append(steps, Step{Phase: phase, Weight: h.Weight})
	}
	last := &steps[len(steps)-1]
	last.Objects = append(last.Objects, objs...)
	return steps, nil
}

func dropEmpty(steps []Step) []Step {
	out := steps[:0]
	for _, s := range steps {
		if len(s.Objects) > 0 {
			out = append(out, s)
		}
	}
	return out
}
