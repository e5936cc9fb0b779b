package helm

import (
	"fmt"
	"slices"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// renderChart runs Helm's engine as `helm template` does (install, revision
// 1, not strict, no cluster lookups) and orders the result into steps.
func renderChart(c *chart.Chart, req Request) ([]Step, error) {
	if c.Metadata.Type == "library" {
		return nil, fmt.Errorf("a library chart cannot be rendered")
	}
	if err := chartutil.ValidateReleaseName(req.ReleaseName); err != nil {
		return nil, fmt.Errorf("release name %q: %w", req.ReleaseName, err)
	}
	caps, err := capabilities(req)
	if err != nil {
		return nil, err
	}
	if kv := c.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart requires kubeVersion %s, the cluster runs %s", kv, caps.KubeVersion.String())
	}
	top, err := renderValues(c, req, caps)
	if err != nil {
		return nil, err
	}
	if err := scanChart(c, ""); err != nil {
		return nil, err
	}
	files, err := engine.Engine{}.Render(c, top)
	if err != nil {
		return nil, templateError(c.Name(), err)
	}
	return buildSteps(c, files, req.Tests)
}

func renderValues(c *chart.Chart, req Request, caps *chartutil.Capabilities) (chartutil.Values, error) {
	vals := MergeValues(req.Values)
	if err := chartutil.ProcessDependenciesWithMerge(c, vals); err != nil {
		return nil, fmt.Errorf("dependencies: %w", err)
	}
	ns := req.ReleaseNamespace
	if ns == "" {
		ns = "default"
	}
	opts := chartutil.ReleaseOptions{Name: req.ReleaseName, Namespace: ns, Revision: 1, IsInstall: true}
	top, err := chartutil.ToRenderValuesWithSchemaValidation(c, vals, opts, caps, false)
	if err != nil {
		return nil, err
	}
	return top, nil
}

// capabilities sets .Capabilities from the cluster facts in the request.
func capabilities(req Request) (*chartutil.Capabilities, error) {
	caps := chartutil.DefaultCapabilities.Copy()
	if req.KubeVersion != "" {
		kv, err := chartutil.ParseKubeVersion(req.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kubernetes version %q: %w", req.KubeVersion, err)
		}
		caps.KubeVersion = *kv
	}
	if len(req.APIVersions) > 0 {
		caps.APIVersions = chartutil.VersionSet(slices.Clone(req.APIVersions))
	}
	return caps, nil
}
