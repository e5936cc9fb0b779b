package spec

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

func validateRepository(r *Repository, diags *Diagnostics) {
	for _, c := range r.Clusters {
		rep := report{src: &c.Source, diags: diags}
		secretRefSet := c.Spec.Kubeconfig.SecretRef != (SecretKeyRef{})
		validateMode(rep, c, secretRefSet || c.Spec.Kubeconfig.Cloud != nil || c.Spec.Kubeconfig.RenewToken != nil)
		defaultCluster(c)
		validateCluster(r, c, rep)
		validateCredentials(rep, &c.Spec.Kubeconfig, secretRefSet)
	}
	for _, c := range r.Classifiers {
		validateClassifier(c, report{src: &c.Source, diags: diags})
	}
	for _, e := range r.EventSources {
		validateEventSource(e, report{src: &e.Source, diags: diags})
	}
	for _, t := range r.Tenants {
		defaultTenant(t)
		validateTenant(r, t, report{src: &t.Source, diags: diags})
	}
	for _, p := range r.Profiles {
		rep := report{src: &p.Source, diags: diags}
		defaultProfile(p)
		validateProfile(confinedTo(r, p), p, rep)
	}
	for _, c := range r.Rollouts {
		validateRolloutControl(r, c, report{src: &c.Source, diags: diags})
	}
	for _, a := range r.Alerts {
		validateAlert(r, a, report{src: &a.Source, diags: diags})
	}
	checkDuplicateNames(r, diags)
	checkDependencyCycles(r, diags)
	checkClassifierConflicts(r, diags)
	checkProfilesSelectSomething(r, diags)
	checkTenantProfiles(r, diags)
	checkPulledEvents(r, diags)
}

// DefaultKubeconfigNamespace is where a kubeconfig Secret is looked up when
// cluster.yaml names no namespace.
const DefaultKubeconfigNamespace = "regatta-system"

func defaultCluster(c *Cluster) {
	if c.Spec.Kubeconfig.Cloud != nil || c.Pulled() {
		return
	}
	ref := &c.Spec.Kubeconfig.SecretRef
	if ref.Name == "" {
		ref.Name = c.Metadata.Name + "-kubeconfig"
	}
	if ref.Namespace == "" {
		ref.Namespace = DefaultKubeconfigNamespace
	}
	if ref.Key == "" {
		ref.Key = "value"
	}
}

func validateCluster(r *Repository, c *Cluster, rep report) {
	dir := strings.TrimSuffix(c.Source.File, "/"+ClusterFile)
	folder := dir[strings.LastIndexByte(dir, '/')+1:]
	checkName(rep, c.Metadata.Name, folder, "folder")
	checkLabels(rep, "metadata.labels", c.Metadata.Labels)
	if ref := c.Spec.Kubeconfig.SecretRef; c.Spec.Kubeconfig.Cloud == nil && !c.Pulled() {
		checkDNS(rep, "spec.kubeconfig.secretRef.name", ref.Name, validation.IsDNS1123Subdomain)
		checkDNS(rep, "spec.kubeconfig.secretRef.namespace", ref.Namespace, validation.IsDNS1123Label)
		checkDNS(rep, "spec.kubeconfig.secretRef.key", ref.Key, validation.IsConfigMapKey)
	}
	checkDecryption(rep, "spec.decryption", c.Spec.Decryption)
	checkClusterNamespaces(rep, c.Spec.Namespaces)
	c.Files = clusterFiles(r, dir)
}

func clusterFiles(r *Repository, dir string) []string {
	var out []string
	for _, f := range listYAML(r.FS, dir, new(Diagnostics)) {
		if !strings.HasSuffix(f, "/"+ClusterFile) {
			out = append(out, f)
		}
	}
	return out
}

// checkName requires a DNS-1123 label equal to the file or folder name.
func checkName(rep report, name, want, what string) {
	if name == "" {
		rep.errorf("metadata.name", "required")
		return
	}
	for _, msg := range validation.IsDNS1123Label(name) {
		rep.errorf("metadata.name", "%q: %s", name, msg)
	}
	if name != want {
		rep.errorf("metadata.name", "%q must equal its %s name %q", name, what, want)
	}
}

func checkDNS(rep report, field, value string, fn func(string) []string) {
	for _, msg := range fn(value) {
		rep.errorf(field, "%q: %s", value, msg)
	}
}

func checkLabels(rep report, field string, lbls map[string]string) {
	for k, v := range lbls {
		for _, msg := range validation.IsQualifiedName(k) {
			rep.errorf(field+"."+k, "label key %q: %s", k, msg)
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			rep.errorf(field+"."+k, "label value %q: %s", v, msg)
		}
	}
}

func checkSelector(rep report, field string, s LabelSelector) {
	checkLabels(rep, field+".matchLabels", s.MatchLabels)
	for i, e := range s.MatchExpressions {
		if _, err := e.requirement(); err != nil {
			rep.errorf(fmt.Sprintf("%s.matchExpressions[%d]", field, i), "%v", err)
		}
	}
}

func checkEnum(rep report, field, value string, allowed ...string) {
	for _, a := range allowed {
		if value == a {
			return
		}
	}
	rep.errorf(field, "%q is not one of %s", value, strings.Join(allowed, ", "))
}

func checkDuration(rep report, field, value string) {
	if value == "" {
		return
	}
	if d, err := time.ParseDuration(value); err != nil || d <= 0 {
		rep.errorf(field, "%q is not a positive duration such as 90s or 5m", value)
	}
}

func checkDuplicateNames(r *Repository, diags *Diagnostics) {
	seen := map[string]*Source{}
	check := func(kind, name string, src *Source) {
		key := kind + "/" + name
		if first, ok := seen[key]; ok {
			report{src: src, diags: diags}.errorf("metadata.name", "%s %q is also defined in %s", kind, name, first.File)
			return
		}
		seen[key] = src
	}
	for _, p := range r.Profiles {
		check(KindProfile, p.Metadata.Name, &p.Source)
	}
	for _, c := range r.Classifiers {
		check(KindClassifier, c.Metadata.Name, &c.Source)
	}
	for _, t := range r.Tenants {
		check(KindTenant, t.Metadata.Name, &t.Source)
	}
}

func checkProfilesSelectSomething(r *Repository, diags *Diagnostics) {
	classifierKeys := map[string]bool{}
	for _, c := range r.Classifiers {
		for k := range c.Spec.ClassifierLabels {
			classifierKeys[k] = true
		}
	}
	for _, p := range r.Profiles {
		if p.selector == nil || anyClusterMatches(r, p) || outsideTenantOnly(r, p) {
			continue
		}
		rep := report{src: &p.Source, diags: diags}
		if p.Spec.ClusterSelector.IsEmpty() && len(p.Spec.ClusterRefs) == 0 {
			rep.warnf("spec.clusterSelector", "empty: the profile selects no cluster (set matchLabels, matchExpressions or clusterRefs)")
			continue
		}
		if usesAny(p.Spec.ClusterSelector.Keys(), classifierKeys) {
			continue // a classifier label may make it match at run time
		}
		rep.warnf("spec.clusterSelector", "selects no cluster")
	}
}

func anyClusterMatches(r *Repository, p *Profile) bool {
	for _, c := range r.Clusters {
		if p.Matches(c.Metadata.Name, c.Metadata.Labels) {
			return true
		}
	}
	return false
}

func usesAny(keys []string, set map[string]bool) bool {
	for _, k := range keys {
		if set[k] {
			return true
		}
	}
	return false
}
