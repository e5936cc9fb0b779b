package render

import (
	"context"
	"errors"
	"fmt"

	"github.com/regatta-dev/regatta/spec"
)

// renderPlan renders every add-on of p in order and returns the result
// and, per add-on, what its render used (for the cache). On failure the
// entries cover the add-ons rendered so far, the failing one last.
func (r *Renderer) renderPlan(ctx context.Context, p *plan) (*Result, []memoEntry, error) {
	prof := p.req.Profile
	res := &Result{Profile: prof.Metadata.Name}
	entries := make([]memoEntry, 0, len(p.addons))
	for i := range p.addons {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		ap := &p.addons[i]
		out, e, err := r.renderAddon(ctx, p, ap)
		entries = append(entries, e)
		if err != nil {
			return nil, entries, inAddon(prof.Metadata.Name, ap.addon.Name, err)
		}
		res.Steps = append(res.Steps, out.steps...)
		if out.artifact != nil {
			res.Artifacts = append(res.Artifacts, *out.artifact)
		}
	}
	res.Steps = dropDuplicateNamespaces(res.Steps)
	defaultNamespaces(res.Steps, addonNamespaces(p))
	return res, entries, nil
}

// addonNamespaces maps each add-on to the namespace its objects without
// one go to: a Helm add-on's release namespace, a Kustomize add-on's
// targetNamespace; "" (DefaultNamespace) for the others.
func addonNamespaces(p *plan) map[string]string {
	out := map[string]string{}
	for _, ap := range p.addons {
		switch a := ap.addon; {
		case a.Helm != nil:
			out[a.Name] = a.Helm.ReleaseNamespace
		case a.Kustomize != nil:
			out[a.Name] = a.Kustomize.TargetNamespace
		}
	}
	return out
}

// addonOutput is a rendered add-on: its steps and, for an OCI-sourced
// add-on, the artifact it read.
type addonOutput struct {
	steps    []Step
	artifact *Artifact
}

// renderAddon renders one add-on and applies its overlay's patches.
func (r *Renderer) renderAddon(ctx context.Context, p *plan, ap *addonPlan) (addonOutput, memoEntry, error) {
	a := r.newAddonRender(ctx, p, ap)
	var steps []Step
	artifact, err := a.useArtifact(ap)
	if err == nil {
		steps, err = a.renderSource(ap)
	}
	steps, e, err := a.finish(ap, artifact, steps, err)
	return addonOutput{steps: steps, artifact: artifact}, e, err
}

// newAddonRender is the state of a render of ap: the repository as the
// profile may read it, the templater and the decryption keys.
func (r *Renderer) newAddonRender(ctx context.Context, p *plan, ap *addonPlan) *addonRender {
	return &addonRender{
		ctx:           ctx,
		r:             r,
		fs:            newRepoFS(spec.Confine(p.req.FS, p.req.Profile.Root())),
		tpl:           newTemplater(ctx, r, p.data),
		keys:          r.opts.Keys,
		decryption:    decryptionKeys(p.req),
		templateFiles: ap.addon.Template,
		allowRemote:   r.opts.AllowRemoteBases && p.req.Profile.Tenant() == nil, // a tenant reads its folder only
		profile:       p.req.Profile,
		plan:          p,
	}
}

// finish applies the overlay's patches and records what the render used.
func (a *addonRender) finish(ap *addonPlan, artifact *Artifact, steps []Step, err error) ([]Step, memoEntry, error) {
	for i := range steps {
		steps[i].NoWait = !ap.addon.Waits()
	}
	if ov := ap.overlay; err == nil && ov != nil && len(ov.Patches) > 0 {
		if steps, err = applyPatches(steps, ov.Patches); err != nil {
			err = a.fieldError(fmt.Sprintf("spec.overlays[%d].patches", ap.overlayIndex), err)
		}
	}
	// Recorded on failure too: a failure is as deterministic as a success.
	e := memoEntry{
		reads:    a.tpl.readList(),
		usedKeys: a.usedKeys.Load(),
		remote:   a.usedRemote.Load(),
		deps:     a.fs.deps.list(),
	}
	if ap.addon.OCI != nil { // the artifact's digest is its content's key
		e.deps = nil
		steps, err = fromArtifact(artifact, a.profile.Source.File, steps, err)
	}
	return steps, e, err
}

// renderSource renders the add-on's one source.
func (a *addonRender) renderSource(ap *addonPlan) ([]Step, error) {
	ad := ap.addon
	field := fmt.Sprintf("spec.addons[%d]", ap.index)
	var objs []Object
	var err error
	switch {
	case ad.Helm != nil:
		return a.renderHelm(ap, field+".helm")
	case ad.Kustomize != nil:
		var dir string
		if dir, err = a.sourcePath(ap, field+".kustomize.path", ad.Kustomize.Path); err == nil {
			objs, err = a.renderKustomize(dir, ad.Kustomize)
		}
	case ad.Manifests != nil:
		var dir string
		if dir, err = a.sourcePath(ap, field+".manifests.path", ad.Manifests.Path); err == nil {
			objs, err = a.renderManifests(dir)
		}
	case ad.Jsonnet != nil:
		objs, err = a.renderJsonnet(ap, field+".jsonnet")
	case ad.Ytt != nil:
		objs, err = a.renderYtt(ap, field+".ytt")
	default:
		err = fmt.Errorf("%s: no source (helm, kustomize, manifests, jsonnet or ytt)", field)
	}
	if err == nil && ad.PostBuild != nil {
		objs, err = a.substitute(field, ad.PostBuild, objs)
	}
	if err != nil {
		return nil, err
	}
	return []Step{{Addon: ad.Name, Phase: PhaseMain, Objects: objs}}, nil
}

// sourcePath returns the add-on's path, or its overlay's, templated.
func (a *addonRender) sourcePath(ap *addonPlan, field, p string) (string, error) {
	if ap.overlay != nil && ap.overlay.Path != "" {
		field, p = fmt.Sprintf("spec.overlays[%d].path", ap.overlayIndex), ap.overlay.Path
	}
	return a.pathField(field, p)
}

// pathField is a path field of the profile, templated: where a template
// makes it leave the repository, or a tenant's folder, it is refused at
// the field with the reason, whatever exists there (regatta validate
// reports it as the daemon does). Paths without template actions are
// checked so when the repository loads.
func (a *addonRender) pathField(field, text string) (string, error) {
	p, err := a.fieldString(field, text)
	if err != nil || !spec.IsTemplated(text) {
		return p, err
	}
	if _, err := spec.ResolvePath(a.fs.fsys, p); errors.Is(err, spec.ErrPathEscapes) {
		return "", a.fieldError(field, err)
	}
	return p, nil
}

// fieldString is a templated profile field such as a path, as the plan
// computed it.
func (a *addonRender) fieldString(field, text string) (string, error) {
	out, err := a.plan.fieldValue(a.tpl, field, text)
	if err != nil {
		return "", a.fieldError(field, err)
	}
	return out, nil
}

// fieldError locates err at a field of the profile file.
func (a *addonRender) fieldError(field string, err error) error {
	if re, ok := err.(*Error); ok && re.File == field {
		err = re.Err
	}
	src := a.profile.Source
	return &Error{File: src.File, Line: src.LineOf(field), Err: fmt.Errorf("%s: %w", field, err)}
}
