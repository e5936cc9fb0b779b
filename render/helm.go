package render

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/spec"
)

// errNoHelm is the failure of a Helm add-on without Options.Helm.
var errNoHelm = errors.New("helm: no chart renderer configured (Options.Helm)")

// renderHelm renders a chart with values layered as chart defaults <
// valuesFiles in order < values < the overlay's values, and maps Helm's
// steps (pre hooks by weight, main, post hooks by weight) to Steps.
func (a *addonRender) renderHelm(ap *addonPlan, field string) ([]Step, error) {
	if a.r.opts.Helm == nil {
		return nil, a.fieldError(field, errNoHelm)
	}
	req, err := a.helmRequest(ap, field)
	if err != nil {
		return nil, err
	}
	res, err := a.r.opts.Helm.Render(a.ctx, req)
	if err != nil {
		return nil, a.helmError(field, req, err)
	}
	source := chartSource(req, res.ChartVersion)
	steps := make([]Step, 0, len(res.Steps)+1)
	if st, ok := createdNamespaceStep(ap.addon.Name, field, ap.addon.Helm, a.profile.Source.File); ok {
		steps = append(steps, st)
	}
	for _, s := range res.Steps {
		objs := make([]Object, len(s.Objects))
		for i, o := range s.Objects {
			objs[i] = Object{Unstructured: o, Source: source}
		}
		steps = append(steps, Step{Addon: ap.addon.Name, Phase: string(s.Phase), Weight: s.Weight, Objects: objs})
	}
	return steps, nil
}

// helmRequest builds the chart request: source, values and capabilities.
func (a *addonRender) helmRequest(ap *addonPlan, field string) (helm.Request, error) {
	req := baseHelmRequest(ap.addon.Helm, a.plan.req.Cluster)
	req.Tests = ap.addon.Helm.Test != nil && ap.addon.Helm.Test.Enable
	if h := ap.addon.Helm; h.Path != "" {
		dir, err := a.pathField(field+".path", h.Path)
		if err != nil {
			return req, err
		}
		resolved, err := a.fs.resolve(dir)
		if err != nil {
			return req, a.fieldError(field+".path", err)
		}
		req.ChartFS, req.ChartPath = a.fs, resolved
	}
	values, err := a.helmValues(ap, field)
	req.Values = values
	return req, err
}

// baseHelmRequest is the part of a chart request known without rendering:
// enough for helm.Resolve.
func baseHelmRequest(h *spec.HelmSource, c ClusterFacts) helm.Request {
	return helm.Request{
		RepositoryURL: h.RepositoryURL, ChartName: h.ChartName, ChartVersion: h.ChartVersion,
		ReleaseName: h.ReleaseName, ReleaseNamespace: h.ReleaseNamespace,
		KubeVersion: c.KubernetesVersion, APIVersions: c.APIVersions,
	}
}

// helmValues layers valuesFiles, valuesFrom, values and the overlay's values.
func (a *addonRender) helmValues(ap *addonPlan, field string) (map[string]any, error) {
	h := ap.addon.Helm
	var layers []map[string]any
	for i, f := range h.ValuesFiles {
		m, err := a.valuesFile(fmt.Sprintf("%s.valuesFiles[%d]", field, i), f)
		if err != nil {
			return nil, err
		}
		layers = append(layers, m)
	}
	from, err := a.valuesFrom(field, h.ValuesFrom)
	if err != nil {
		return nil, err
	}
	layers = append(layers, from...)
	inline, err := a.inlineValues(field+".values", h.Values)
	if err != nil {
		return nil, err
	}
	layers = append(layers, inline)
	if ov := ap.overlay; ov != nil && len(ov.Values) > 0 {
		m, err := a.inlineValues(fmt.Sprintf("spec.overlays[%d].values", ap.overlayIndex), ov.Values)
		if err != nil {
			return nil, err
		}
		layers = append(layers, m)
	}
	return helm.MergeValues(layers...), nil
}

// valuesFile reads a values file: its path and its content are templates,
// and a SOPS-encrypted file is decrypted first.
func (a *addonRender) valuesFile(field, p string) (map[string]any, error) {
	file, err := a.pathField(field, p)
	if err != nil {
		return nil, err
	}
	data, err := a.fs.ReadFile(file)
	if err != nil {
		return nil, a.fieldError(field, describePathError(file, err))
	}
	if data, err = a.decrypt(file, data); err != nil {
		return nil, err
	}
	if data, err = a.tpl.execute(file, data); err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		line, msg := yamlErrorLine(data, err)
		return nil, &Error{File: file, Line: line, Err: errors.New(msg)}
	}
	return m, nil
}

// inlineValues templates the string leaves of values from the profile.
func (a *addonRender) inlineValues(field string, values map[string]any) (map[string]any, error) {
	out, err := a.plan.valuesField(a.tpl, field, values)
	if err != nil {
		return nil, a.fieldError(field, err)
	}
	m, _ := out.(map[string]any)
	return m, nil
}

// helmError locates a chart failure: in the chart folder for a template
// error of an in-repository chart, at the profile's helm field otherwise.
func (a *addonRender) helmError(field string, req helm.Request, err error) error {
	var te *helm.TemplateError
	if req.ChartFS != nil && errors.As(err, &te) {
		return &Error{File: req.ChartPath + "/" + te.File, Line: te.Line, Err: &wrapped{msg: "helm: " + te.Msg, err: err}}
	}
	return a.fieldError(field, err)
}

// chartSource names where a chart's objects come from.
func chartSource(req helm.Request, version string) string {
	if req.ChartFS != nil {
		return req.ChartPath
	}
	return fmt.Sprintf("%s %s@%s", req.RepositoryURL, req.ChartName, version)
}

// withChart adds a repository chart's digest to an add-on key, since the
// chart can change under the same version constraint (or the same tag).
func (r *Renderer) withChart(ctx context.Context, p *plan, ap *addonPlan, k string) (string, error) {
	h := ap.addon.Helm
	if h == nil || h.RepositoryURL == "" || r.opts.Helm == nil {
		return k, nil
	}
	_, digest, err := r.opts.Helm.Resolve(ctx, baseHelmRequest(h, p.req.Cluster))
	if err != nil {
		return "", inAddon(p.req.Profile.Metadata.Name, ap.addon.Name, err)
	}
	return hashStrings(k, "chart="+digest), nil
}
