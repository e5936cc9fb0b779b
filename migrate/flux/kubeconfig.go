package flux

import (
	"encoding/base64"
	"reflect"
	"slices"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// carriedKubeConfig are the keys of a spec.kubeConfig.configMapRef
// ConfigMap that become spec.kubeconfig.cloud.
var carriedKubeConfig = map[string]bool{"provider": true, "cluster": true, "address": true, "ca.crt": true}

// kubeConfig carries the spec.kubeConfig of what applies to a remote
// cluster into its cluster.yaml: a secretRef becomes
// spec.kubeconfig.secretRef, a configMapRef with an aws, gcp or azure
// provider becomes spec.kubeconfig.cloud. Kustomizations and the
// HelmReleases they build count alike (a HelmRelease without one goes
// where its Kustomization applies it). regatta reaches one cluster per
// folder, so the first one's decides; the others' differences are
// reported.
func (im *importer) kubeConfig(s *scan, c *spec.Cluster) {
	apps := im.appliers(s)
	i := slices.IndexFunc(apps, func(a applier) bool { return a.kc != nil })
	if i < 0 {
		return
	}
	first := apps[i]
	im.carryKubeConfig(s, first.obj, first.kc, c)
	for j, a := range apps {
		switch {
		case j == i:
		case a.kc == nil:
			im.report.Add(a.obj.doc, "spec", "has no spec.kubeConfig while %s %s has: regatta applies every profile of %s/%s to the cluster that kubeConfig reaches",
				first.obj.kind(), first.obj.name(), spec.ClustersDir, s.cluster)
		case !reflect.DeepEqual(a.kc, first.kc):
			im.report.Add(a.obj.doc, "spec.kubeConfig", "not carried over: %s/%s is reached as %s %s says (one cluster per folder)",
				spec.ClustersDir, s.cluster, first.obj.kind(), first.obj.name())
		}
	}
}

// applier is a Kustomization or HelmRelease and the kubeConfig of the
// cluster it applies to (nil: Flux's own).
type applier struct {
	obj object
	kc  map[string]any
}

// appliers lists a cluster's Kustomizations, each followed by the
// HelmReleases it builds. A Kustomization that applies nothing but Flux
// objects counts only through them.
func (im *importer) appliers(s *scan) []applier {
	var out []applier
	for _, b := range s.kustomizations {
		kc := migrate.Map(b.ks.obj, "spec", "kubeConfig")
		if kc != nil || b.plain > 0 {
			out = append(out, applier{obj: b.ks, kc: kc})
		}
		for _, hr := range im.releasesOf(b) {
			own := migrate.Map(hr.obj, "spec", "kubeConfig")
			if own == nil {
				own = kc
			}
			out = append(out, applier{obj: hr, kc: own})
		}
	}
	return out
}

// carryKubeConfig carries the kubeConfig of o, a Kustomization or a
// HelmRelease (references are in its namespace).
func (im *importer) carryKubeConfig(s *scan, o object, kc map[string]any, c *spec.Cluster) {
	if ref := migrate.Map(kc, "secretRef"); ref != nil {
		c.Spec.Kubeconfig.SecretRef = spec.SecretKeyRef{Name: migrate.Str(ref, "name"), Namespace: o.namespace(), Key: migrate.Str(ref, "key")}
		im.report.Add(o.doc, "spec.kubeConfig.secretRef", "carried over as spec.kubeconfig.secretRef: regatta reads Secret %s/%s from its management cluster (--management-kubeconfig) or from clusters/%s/",
			o.namespace(), migrate.Str(ref, "name"), s.cluster)
		return
	}
	ref := migrate.Map(kc, "configMapRef")
	name := migrate.Str(ref, "name")
	cm, ok := s.objects[refKey("ConfigMap", o.namespace(), name)]
	if !ok {
		im.report.Add(o.doc, "spec.kubeConfig.configMapRef", "not carried over: ConfigMap %s/%s is not in the repository; set spec.kubeconfig.cloud in %s/%s/cluster.yaml",
			o.namespace(), name, spec.ClustersDir, s.cluster)
		return
	}
	im.carryCloud(cm, c)
}

// carryCloud turns a Flux kubeConfig ConfigMap (provider, cluster, address,
// ca.crt) into spec.kubeconfig.cloud.
func (im *importer) carryCloud(cm object, c *spec.Cluster) {
	data := migrate.Map(cm.obj, "data")
	provider := migrate.Str(data, "provider")
	if provider != spec.ProviderAWS && provider != spec.ProviderGCP && provider != spec.ProviderAzure {
		im.report.Add(cm.doc, "data.provider", "provider %q not carried over: regatta gets tokens for aws, gcp and azure", provider)
		return
	}
	cloud := &spec.CloudCredentials{Provider: provider, Server: migrate.Str(data, "address")}
	if ca := migrate.Str(data, "ca.crt"); ca != "" {
		cloud.CertificateAuthorityData = base64.StdEncoding.EncodeToString([]byte(ca))
	}
	cloud.Cluster = migrate.Str(data, "cluster")
	c.Spec.Kubeconfig = spec.KubeconfigSource{Cloud: cloud}
	switch given := cloud.Server != "" || cloud.CertificateAuthorityData != ""; {
	case given && (cloud.Server == "" || cloud.CertificateAuthorityData == ""):
		im.report.Add(cm.doc, "data", "address and ca.crt go together: give both, or neither and regatta looks the endpoint up by cluster")
	case !given && cloud.Cluster == "":
		im.report.Add(cm.doc, "data", "cluster is required without address and ca.crt: regatta looks the endpoint up by the cluster's name (aws), resource name (gcp) or resource ID (azure)")
	}
	for _, k := range sortedKeys(data) {
		switch {
		case k == "serviceAccountName":
			im.report.Add(cm.doc, "data."+k, "not carried over: regatta uses the workload identity of its own pod, not a per-object ServiceAccount")
		case !carriedKubeConfig[k]:
			im.report.Add(cm.doc, "data."+k, "not carried over")
		}
	}
}
