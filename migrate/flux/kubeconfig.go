package flux

import (
	"encoding/base64"
	"reflect"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/spec"
)

// carriedKubeConfig are the keys of a spec.kubeConfig.configMapRef
// ConfigMap that become spec.kubeconfig.cloud.
var carriedKubeConfig = map[string]bool{"provider": true, "cluster": true, "address": true, "ca.crt": true}

// kubeConfig carries the spec.kubeConfig of the cluster's Kustomizations
// (they apply to a remote cluster) into its cluster.yaml: a secretRef
// becomes spec.kubeconfig.secretRef, a configMapRef with an aws, gcp or
// azure provider becomes spec.kubeconfig.cloud. regatta reaches one
// cluster per folder, so the first Kustomization's decides; the others'
// differences are reported.
func (im *importer) kubeConfig(s *scan, c *spec.Cluster) {
	var first *object
	var firstKC map[string]any
	for _, b := range s.kustomizations {
		ks := b.ks
		kc := migrate.Map(ks.obj, "spec", "kubeConfig")
		switch {
		case kc == nil && first != nil:
			im.report.Add(ks.doc, "spec", "has no spec.kubeConfig while %s has: regatta applies every profile of %s/%s to the cluster that kubeConfig reaches",
				first.name(), spec.ClustersDir, s.cluster)
		case kc == nil:
		case first == nil:
			first, firstKC = &ks, kc
			im.carryKubeConfig(s, ks, kc, c)
		case !reflect.DeepEqual(kc, firstKC):
			im.report.Add(ks.doc, "spec.kubeConfig", "not carried over: %s/%s is reached as Kustomization %s says (one cluster per folder)",
				spec.ClustersDir, s.cluster, first.name())
		}
	}
}

func (im *importer) carryKubeConfig(s *scan, ks object, kc map[string]any, c *spec.Cluster) {
	if ref := migrate.Map(kc, "secretRef"); ref != nil {
		c.Spec.Kubeconfig.SecretRef = spec.SecretKeyRef{Name: migrate.Str(ref, "name"), Namespace: ks.namespace(), Key: migrate.Str(ref, "key")}
		im.report.Add(ks.doc, "spec.kubeConfig.secretRef", "carried over as spec.kubeconfig.secretRef: regatta reads Secret %s/%s from its management cluster (--management-kubeconfig) or from clusters/%s/",
			ks.namespace(), migrate.Str(ref, "name"), s.cluster)
		return
	}
	ref := migrate.Map(kc, "configMapRef")
	name := migrate.Str(ref, "name")
	cm, ok := s.objects[refKey("ConfigMap", ks.namespace(), name)]
	if !ok {
		im.report.Add(ks.doc, "spec.kubeConfig.configMapRef", "not carried over: ConfigMap %s/%s is not in the repository; set spec.kubeconfig.cloud in %s/%s/cluster.yaml",
			ks.namespace(), name, spec.ClustersDir, s.cluster)
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
	if provider == spec.ProviderAWS {
		cloud.Cluster = migrate.Str(data, "cluster")
	}
	c.Spec.Kubeconfig = spec.KubeconfigSource{Cloud: cloud}
	if cloud.Server == "" || cloud.CertificateAuthorityData == "" {
		im.report.Add(cm.doc, "data", "address and ca.crt are required: regatta does not look a cluster's endpoint up from the cloud; add them to spec.kubeconfig.cloud (server, certificateAuthorityData)")
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
