package helm

import (
	"context"
	"fmt"
	"slices"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// rendered is the output of Helm's engine: the rendered template files and
// the CRD files of the chart and its enabled subcharts.
type rendered struct {
	Files map[string]string `json:"-"`
	CRDs  []crdFile         `json:"crds"`
	// RawFiles carries Files between processes as bytes: JSON strings
	// would replace bytes that are not UTF-8.
	RawFiles map[string][]byte `json:"files"`
}

// toRaw and fromRaw move Files to RawFiles and back.
func (r *rendered) toRaw() {
	r.RawFiles = make(map[string][]byte, len(r.Files))
	for k, v := range r.Files {
		r.RawFiles[k] = []byte(v)
	}
	r.Files = nil
}

func (r *rendered) fromRaw() {
	r.Files = make(map[string]string, len(r.RawFiles))
	for k, v := range r.RawFiles {
		r.Files[k] = string(v)
	}
	r.RawFiles = nil
}

// crdFile is a file of a crds/ folder; Name includes the subchart path.
type crdFile struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// renderChart runs Helm's engine as `helm template` does (install, revision
// 1, not strict, no cluster lookups), in a worker process when the
// Renderer has one, and orders the result into steps.
func (r *Renderer) renderChart(ctx context.Context, c *chart.Chart, req Request) ([]Step, error) {
	var out *rendered
	var err error
	fetch := r.newSchemaFetcher(ctx)
	if r.workers != nil {
		// a worker has no network: it gets the documents the schemas
		// name, fetched here under the URL policy
		prefetchSchemas(c, fetch)
		out, err = r.workers.render(ctx, c, req, fetch.recorded())
	} else {
		out, err = renderFiles(c, req, fetch)
	}
	if err != nil {
		return nil, err
	}
	return buildSteps(c.Name(), out, req.Tests)
}

// renderFiles is the part of a render that runs chart code: values,
// dependency conditions, schema, templates. remote loads the http(s)
// documents the schemas name.
func renderFiles(c *chart.Chart, req Request, remote remoteLoader) (*rendered, error) {
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
	top, err := renderValues(c, req, caps, remote)
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
	out := &rendered{Files: files}
	for _, crd := range c.CRDObjects() {
		out.CRDs = append(out.CRDs, crdFile{Name: crd.Filename, Data: crd.File.Data})
	}
	return out, nil
}

// renderValues is Helm's chartutil.ToRenderValuesWithSchemaValidation
// with the schemas validated by validateSchemas (see schema.go).
func renderValues(c *chart.Chart, req Request, caps *chartutil.Capabilities, remote remoteLoader) (chartutil.Values, error) {
	vals := MergeValues(req.Values)
	if err := chartutil.ProcessDependenciesWithMerge(c, vals); err != nil {
		return nil, fmt.Errorf("dependencies: %w", err)
	}
	ns := req.ReleaseNamespace
	if ns == "" {
		ns = "default"
	}
	opts := chartutil.ReleaseOptions{Name: req.ReleaseName, Namespace: ns, Revision: 1, IsInstall: true}
	top, err := chartutil.ToRenderValuesWithSchemaValidation(c, vals, opts, caps, true)
	if err != nil {
		return nil, err
	}
	values, _ := top["Values"].(chartutil.Values)
	if err := validateSchemas(c, values, remote); err != nil {
		return nil, fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%w", err)
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
