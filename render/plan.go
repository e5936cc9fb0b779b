package render

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/regatta-dev/regatta/spec"
)

// plan is a request made ready to render or to look up: overlays chosen,
// template data assembled, templated fields computed and each add-on's
// memo key computed.
type plan struct {
	req    Request
	data   templateData
	addons []addonPlan
	// fields are the results of the templated profile fields, by field
	// path (spec.addons[0].kustomize.path).
	fields map[string]fieldResult
	// readVals and keysHash are computed on first use.
	readVals map[string]string
	keysHash string
}

// fieldResult is a templated field's text (or values tree) or failure.
type fieldResult struct {
	text   string
	values any
	err    error
}

// addonPlan is one add-on of a plan.
type addonPlan struct {
	index   int
	addon   *spec.Addon
	overlay *spec.Overlay
	// overlayIndex is the index of overlay in spec.overlays, or -1.
	overlayIndex int
	// memoKey hashes the add-on's inputs that are neither repository
	// content nor data read by content templates: its spec, its overlay,
	// the results of its templated fields and, for Helm, the cluster's
	// capabilities.
	memoKey string
}

// newPlan selects the overlays of every add-on, computes the templated
// fields (paths, values) and the memo keys: two clusters whose paths come
// out the same share the memo key, whatever data the paths were made of.
func (r *Renderer) newPlan(ctx context.Context, req Request) (*plan, error) {
	prof := req.Profile
	req.Cluster.APIVersions = sortedCopy(req.Cluster.APIVersions)
	p := &plan{req: req, data: dataOf(req), fields: map[string]fieldResult{}}
	tpl := newTemplater(ctx, r, p.data)
	tpl.fields = r.cache.fields
	tpl.facts = func(reads []dataRead) string { return p.factsKey(reads, false) }
	for i := range prof.Spec.Addons {
		ad := &prof.Spec.Addons[i]
		ov, oi, err := selectOverlay(prof, ad.Name, req.Cluster.Labels)
		if err != nil {
			return nil, &Error{Profile: prof.Metadata.Name, Addon: ad.Name, File: prof.Source.File,
				Line: prof.Source.LineOf(fmt.Sprintf("spec.overlays[%d]", oi)), Err: err}
		}
		ap := addonPlan{index: i, addon: ad, overlay: ov, overlayIndex: oi}
		fields := p.templateFields(tpl, &ap)
		ap.memoKey = hashJSON(memoInputs(prof, &ap, req.Cluster, fields))
		p.addons = append(p.addons, ap)
	}
	return p, nil
}

// templateFields executes the add-on's templated fields (the path in use,
// values files, values and the overlay's values) into p.fields and
// returns their results for the memo key.
func (p *plan) templateFields(tpl *templater, ap *addonPlan) map[string]string {
	out := map[string]string{}
	field := fmt.Sprintf("spec.addons[%d]", ap.index)
	str := func(f, text string) {
		if !strings.Contains(text, "{{") {
			return
		}
		res, err := tpl.executeString(f, text)
		p.fields[f] = fieldResult{text: res, err: err}
		out[f] = resultText(res, err)
	}
	tree := func(f string, v map[string]any) {
		if !hasTemplateLeaf(v) {
			return
		}
		res, err := tpl.executeValues(f, v)
		p.fields[f] = fieldResult{values: res, err: err}
		out[f] = resultText(hashJSON(res), err)
	}
	ad, ov := ap.addon, ap.overlay
	switch {
	case ov != nil && ov.Path != "":
		str(fmt.Sprintf("spec.overlays[%d].path", ap.overlayIndex), ov.Path)
	case ad.Kustomize != nil:
		str(field+".kustomize.path", ad.Kustomize.Path)
	case ad.Manifests != nil:
		str(field+".manifests.path", ad.Manifests.Path)
	case ad.Jsonnet != nil:
		str(field+".jsonnet.path", ad.Jsonnet.Path)
	}
	if y := ad.Ytt; y != nil {
		for i, f := range y.Paths {
			str(fmt.Sprintf("%s.ytt.paths[%d]", field, i), f)
		}
		for i, f := range y.ValuesFiles {
			str(fmt.Sprintf("%s.ytt.valuesFiles[%d]", field, i), f)
		}
	}
	if h := ad.Helm; h != nil {
		str(field+".helm.path", h.Path)
		for i, f := range h.ValuesFiles {
			str(fmt.Sprintf("%s.helm.valuesFiles[%d]", field, i), f)
		}
		tree(field+".helm.values", h.Values)
	}
	if ov != nil {
		tree(fmt.Sprintf("spec.overlays[%d].values", ap.overlayIndex), ov.Values)
	}
	return out
}

func resultText(s string, err error) string {
	if err != nil {
		return "error:" + err.Error()
	}
	return "ok:" + s
}

// fieldValue is a templated field's result; a field the plan did not
// compute holds no template.
func (p *plan) fieldValue(tpl *templater, field, text string) (string, error) {
	if r, ok := p.fields[field]; ok {
		return r.text, r.err
	}
	return tpl.executeString(field, text)
}

// valuesField is valuesField for a values tree.
func (p *plan) valuesField(tpl *templater, field string, v map[string]any) (any, error) {
	if r, ok := p.fields[field]; ok {
		return r.values, r.err
	}
	return tpl.executeValues(field, v)
}

func dataOf(req Request) templateData {
	c := req.Cluster
	return templateData{
		Cluster: clusterData{Name: c.Name, Labels: c.Labels, Values: c.Values,
			KubernetesVersion: c.KubernetesVersion},
		Profile:  profileData{Name: req.Profile.Metadata.Name},
		Revision: req.Revision,
		Event:    eventDataOf(req.Event),
	}
}

// memoInputs are the inputs hashed into an add-on's memo key.
func memoInputs(prof *spec.Profile, ap *addonPlan, c ClusterFacts, fields map[string]string) any {
	in := map[string]any{"v": 2, "profile": prof.Metadata.Name, "index": ap.index, "addon": ap.addon}
	if ap.overlay != nil {
		in["overlay"] = ap.overlay
	}
	if t := prof.Tenant(); t != nil {
		in["tenant"] = map[string]any{"root": t.Root(), "decryption": t.Spec.Decryption}
	}
	if len(fields) > 0 {
		in["fields"] = fields
	}
	if ap.addon.Helm != nil {
		in["kubeVersion"], in["apiVersions"] = c.KubernetesVersion, c.APIVersions
	}
	return in
}

// factsKey is the part of the cluster's facts a render used: the values
// of the template data its content templates read, and its decryption
// keys when a SOPS file was read.
func (p *plan) factsKey(reads []dataRead, usedKeys bool) string {
	var b strings.Builder
	for _, r := range reads {
		b.WriteString(r.String())
		b.WriteByte('=')
		b.WriteString(p.readValue(r))
		b.WriteByte('\x1e')
	}
	if usedKeys {
		if p.keysHash == "" {
			p.keysHash = hashJSON(decryptionKeys(p.req))
		}
		b.WriteString("keys=" + p.keysHash)
	}
	return b.String()
}

// readValue is what a read saw in this plan's data.
func (p *plan) readValue(r dataRead) string {
	k := r.String()
	if v, ok := p.readVals[k]; ok {
		return v
	}
	if p.readVals == nil {
		p.readVals = map[string]string{}
	}
	v := lookupRead(p.data, r)
	p.readVals[k] = v
	return v
}

func sortedCopy(s []string) []string {
	if s == nil {
		return nil
	}
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
