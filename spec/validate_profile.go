package spec

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

func defaultProfile(p *Profile) {
	s := &p.Spec
	if s.SyncMode == "" {
		s.SyncMode = SyncModeContinuous
	}
	if s.StopMatchingBehavior == "" {
		s.StopMatchingBehavior = StopMatchingWithdrawPolicies
	}
	for i := range s.Addons {
		if h := s.Addons[i].Helm; h != nil {
			if h.ReleaseName == "" {
				h.ReleaseName = s.Addons[i].Name
			}
			if h.ReleaseNamespace == "" {
				h.ReleaseNamespace = "default"
			}
		}
	}
}

func validateProfile(r *Repository, p *Profile, rep report) {
	s := &p.Spec
	checkName(rep, p.Metadata.Name, fileStem(p.Source.File), "file")
	checkLabels(rep, "metadata.labels", p.Metadata.Labels)
	checkSelector(rep, "spec.clusterSelector", s.ClusterSelector)
	if sel, err := s.ClusterSelector.Compile(); err == nil {
		p.selector, p.ownSelector = sel, sel
	}
	checkEventTrigger(r, p, rep)
	for i, ref := range s.ClusterRefs {
		if r.Cluster(ref) == nil {
			rep.warnf(fmt.Sprintf("spec.clusterRefs[%d]", i), "cluster %q does not exist", ref)
		}
	}
	checkEnum(rep, "spec.syncMode", s.SyncMode, SyncModeOneTime, SyncModeContinuous, SyncModeContinuousWithDriftDetection, SyncModeDryRun)
	checkEnum(rep, "spec.stopMatchingBehavior", s.StopMatchingBehavior, StopMatchingWithdrawPolicies, StopMatchingLeavePolicies)
	if s.Tier != nil && *s.Tier < 0 {
		rep.errorf("spec.tier", "must be 0 or more, got %d", *s.Tier)
	}
	checkDuration(rep, "spec.healthTimeout", s.HealthTimeout)
	checkDependsOn(r, p, rep)
	checkAddons(r.FS, s.Addons, rep)
	checkCreateNamespace(p, rep)
	checkOverlays(r, p, rep)
	checkHealthChecks(r, s.HealthChecks, rep)
	checkDriftExclusions(s.DriftExclusions, rep)
	checkRollout(s.Rollout, rep)
}

func fileStem(file string) string {
	base := file[strings.LastIndexByte(file, '/')+1:]
	return strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".yml")
}

func checkDependsOn(r *Repository, p *Profile, rep report) {
	seen := map[string]bool{}
	for i, d := range p.Spec.DependsOn {
		field := fmt.Sprintf("spec.dependsOn[%d]", i)
		switch {
		case d == p.Metadata.Name:
			rep.errorf(field, "a profile cannot depend on itself")
		case seen[d]:
			rep.errorf(field, "%q is listed twice", d)
		case r.Profile(d) == nil && !r.failedToLoad(KindProfile, d):
			rep.errorf(field, "profile %q does not exist", d)
		}
		seen[d] = true
	}
}

func checkAddons(fsys fs.FS, addons []Addon, rep report) {
	if len(addons) == 0 {
		rep.errorf("spec.addons", "at least one add-on is required")
	}
	seen := map[string]int{}
	for i, a := range addons {
		field := fmt.Sprintf("spec.addons[%d]", i)
		checkAddonName(rep, field, a.Name, seen, i)
		switch n := countSources(a); {
		case n == 0:
			rep.errorf(field, "needs one source: helm, kustomize, manifests, jsonnet or ytt")
		case n > 1:
			rep.errorf(field, "has %d sources; set exactly one of helm, kustomize, manifests, jsonnet or ytt", n)
		}
		if a.Helm != nil {
			checkHelm(fsys, a.Helm, field+".helm", rep)
		}
		fsys := fsys
		if a.OCI != nil {
			checkOCI(rep, field+".oci", a)
			if r := a.OCI.SecretRef; r != nil {
				checkRepoPath(fsys, rep, field+".oci.secretRef.path", r.Path, pathFile)
			}
			if v := a.OCI.Verify; v != nil && v.PublicKeySecretRef != nil {
				checkRepoPath(fsys, rep, field+".oci.verify.publicKeySecretRef.path", v.PublicKeySecretRef.Path, pathFile)
			}
			fsys = nil // the paths below are in the artifact
		}
		if k := a.Kustomize; k != nil {
			checkKustomizePath(fsys, rep, field+".kustomize.path", k.Path)
			checkPatches(rep, field+".kustomize.patches", k.Patches)
		}
		if m := a.Manifests; m != nil {
			checkManifestsPath(fsys, rep, field+".manifests.path", m.Path)
		}
		if j := a.Jsonnet; j != nil {
			checkJsonnet(fsys, rep, field+".jsonnet", j)
		}
		if y := a.Ytt; y != nil {
			checkYtt(fsys, rep, field+".ytt", y)
		}
		checkFluxFields(fsys, a, field, rep)
	}
}

func checkAddonName(rep report, field, name string, seen map[string]int, i int) {
	if name == "" {
		rep.errorf(field+".name", "required")
		return
	}
	for _, msg := range validation.IsDNS1123Label(name) {
		rep.errorf(field+".name", "%q: %s", name, msg)
	}
	if first, dup := seen[name]; dup {
		rep.errorf(field+".name", "%q is already the name of spec.addons[%d]", name, first)
		return
	}
	seen[name] = i
}

func countSources(a Addon) int {
	n := 0
	for _, set := range []bool{a.Helm != nil, a.Kustomize != nil, a.Manifests != nil, a.Jsonnet != nil, a.Ytt != nil} {
		if set {
			n++
		}
	}
	return n
}

func checkHelm(fsys fs.FS, h *HelmSource, field string, rep report) {
	switch {
	case h.RepositoryURL != "" && h.Path != "":
		rep.errorf(field, "set repositoryURL or path, not both")
	case h.RepositoryURL == "" && h.Path == "":
		rep.errorf(field, "needs repositoryURL (http://, https://, oci://) or path (a chart folder in this repository)")
	case h.Path != "":
		checkRepoPath(fsys, rep, field+".path", h.Path, pathChart)
	default:
		checkChartURL(h, field, rep)
	}
	checkDNS(rep, field+".releaseName", h.ReleaseName, validation.IsDNS1123Subdomain)
	checkDNS(rep, field+".releaseNamespace", h.ReleaseNamespace, validation.IsDNS1123Label)
	for i, f := range h.ValuesFiles {
		checkRepoPath(fsys, rep, fmt.Sprintf("%s.valuesFiles[%d]", field, i), f, pathFile)
	}
}

// checkCreateNamespace refuses createNamespace in an event profile, whose
// instances would each create the same release namespace, and warns when
// the namespace exists on every cluster.
func checkCreateNamespace(p *Profile, rep report) {
	for i, a := range p.Spec.Addons {
		if a.Helm == nil || !a.Helm.CreateNamespace {
			continue
		}
		field := fmt.Sprintf("spec.addons[%d].helm.createNamespace", i)
		switch {
		case p.Spec.EventTrigger != nil:
			rep.errorf(field, "not supported in an event profile (every instance would create namespace %s): create it in a profile of its own", a.Helm.ReleaseNamespace)
		case PresetNamespaces[a.Helm.ReleaseNamespace]:
			rep.warnf(field, "namespace %s exists on every cluster: nothing to create (set releaseNamespace)", a.Helm.ReleaseNamespace)
		}
	}
}

func checkChartURL(h *HelmSource, field string, rep report) {
	u := h.RepositoryURL
	if !(strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "oci://")) {
		rep.errorf(field+".repositoryURL", "%q must start with https://, http:// or oci:// (use path for a chart in this repository)", u)
	}
	if h.ChartName == "" && !strings.HasPrefix(u, "oci://") {
		rep.errorf(field+".chartName", "required with an http(s) chart repository")
	}
	if h.ChartVersion == "" {
		rep.warnf(field+".chartVersion", "not set: the newest chart version is used, so a chart release changes clusters without a commit")
	}
}

func checkPatches(rep report, field string, patches []Patch) {
	for i, p := range patches {
		f := fmt.Sprintf("%s[%d]", field, i)
		if strings.TrimSpace(p.Patch) == "" {
			rep.errorf(f+".patch", "required")
		}
		checkTarget(rep, f+".target", p.Target)
	}
}

func checkTarget(rep report, field string, t *PatchSelector) {
	if t == nil {
		return
	}
	for _, s := range []struct{ name, v string }{{"labelSelector", t.LabelSelector}, {"annotationSelector", t.AnnotationSelector}} {
		if s.v == "" {
			continue
		}
		if _, err := labels.Parse(s.v); err != nil {
			rep.errorf(field+"."+s.name, "%v", err)
		}
	}
}

func checkOverlays(r *Repository, p *Profile, rep report) {
	addons := map[string]*Addon{}
	for i := range p.Spec.Addons {
		addons[p.Spec.Addons[i].Name] = &p.Spec.Addons[i]
	}
	for i, o := range p.Spec.Overlays {
		field := fmt.Sprintf("spec.overlays[%d]", i)
		checkSelector(rep, field+".clusterSelector", o.ClusterSelector)
		if o.ClusterSelector.IsEmpty() {
			rep.errorf(field+".clusterSelector", "required: an overlay applies to the clusters it selects")
		}
		a, ok := addons[o.Addon]
		if !ok {
			rep.errorf(field+".addon", "add-on %q is not in spec.addons", o.Addon)
			continue
		}
		if len(o.Values) > 0 && a.Helm == nil {
			rep.errorf(field+".values", "add-on %q is not a Helm chart; use patches", o.Addon)
		}
		checkPatches(rep, field+".patches", o.Patches)
		checkOverlayPath(r.FS, rep, field+".path", o.Path, a)
	}
}

func checkOverlayPath(fsys fs.FS, rep report, field, p string, a *Addon) {
	switch {
	case p == "":
	case a.Kustomize != nil:
		checkKustomizePath(fsys, rep, field, p)
	case a.Manifests != nil:
		checkRepoPath(fsys, rep, field, p, pathAny)
	case a.Jsonnet != nil:
		checkRepoPath(fsys, rep, field, p, pathFile)
	default:
		rep.errorf(field, "only kustomize, manifests and jsonnet add-ons take an overlay path")
	}
}

func checkHealthChecks(r *Repository, hcs []HealthCheck, rep report) {
	seen := map[string]int{}
	for i, h := range hcs {
		field := fmt.Sprintf("spec.healthChecks[%d]", i)
		if h.Kind == "" {
			rep.errorf(field+".kind", "required")
		}
		checkHealthKey(rep, field+".group", h.Group)
		checkHealthKey(rep, field+".kind", h.Kind)
		gk := h.Group + "/" + h.Kind
		if first, dup := seen[gk]; dup {
			rep.errorf(field, "group %q kind %q already has a health check in spec.healthChecks[%d]", h.Group, h.Kind, first)
		}
		seen[gk] = i
		switch {
		case (h.Script == "") == (h.ScriptFile == ""):
			rep.errorf(field, "set exactly one of script or scriptFile")
		case h.ScriptFile != "":
			checkScriptFile(r.FS, rep, field+".scriptFile", h.ScriptFile)
		default:
			checkLua(rep, field+".script", h.Script)
		}
	}
}

// checkHealthKey reports a group or kind glob that path.Match rejects.
func checkHealthKey(rep report, field, p string) {
	if _, err := path.Match(p, ""); err != nil {
		rep.errorf(field, "%q is not a valid glob (*, ?, [a-z]): %v", p, err)
	}
}

// checkScriptFile checks that a health script file exists and is Lua.
func checkScriptFile(fsys fs.FS, rep report, field, p string) {
	resolved, ok := checkRepoPath(fsys, rep, field, p, pathFile)
	if !ok {
		return
	}
	b, err := fs.ReadFile(fsys, resolved)
	if err != nil {
		rep.errorf(field, "cannot read %s: %v", p, err)
		return
	}
	if msg, line := luaSyntaxError(string(b), p); msg != "" {
		where := p
		switch {
		case line > 0:
			where = fmt.Sprintf("%s:%d", p, line)
		case line == 0:
			where = p + " at the end"
		}
		rep.errorf(field, "Lua syntax error in %s: %s", where, msg)
	}
}

func checkDriftExclusions(des []DriftExclusion, rep report) {
	for i, d := range des {
		field := fmt.Sprintf("spec.driftExclusions[%d]", i)
		checkTarget(rep, field+".target", d.Target)
		if len(d.Paths) == 0 {
			rep.errorf(field+".paths", "at least one JSON pointer is required")
		}
		for j, p := range d.Paths {
			if msg := checkPointer(p); msg != "" {
				rep.errorf(fmt.Sprintf("%s.paths[%d]", field, j), "%q is not a JSON pointer: %s", p, msg)
			}
		}
	}
}

// checkPointer checks RFC 6901 syntax: a pointer starts with / and "~" is
// only followed by 0 (for ~) or 1 (for /).
func checkPointer(p string) string {
	if !strings.HasPrefix(p, "/") {
		return "it starts with /, e.g. /spec/replicas"
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return fmt.Sprintf("~ at offset %d must be followed by 0 (for ~) or 1 (for /)", i)
		}
	}
	return ""
}
