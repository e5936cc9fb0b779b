package spec

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Cloud providers of spec.kubeconfig.cloud.provider.
const (
	ProviderAWS   = "aws"
	ProviderGCP   = "gcp"
	ProviderAzure = "azure"
)

// AKSServerApplication is the application ID of the AKS server whose Entra
// ID tokens AKS clusters accept (the default of cloud.audience for azure).
const AKSServerApplication = "6dae42f8-4368-4678-94ff-3960e28e3630"

// CloudCredentials reaches a managed cluster (EKS, GKE, AKS) with
// short-lived tokens of the workload identity of regatta's pod. The
// endpoint and CA are given, or (both left out) looked up from the cloud's
// management API by Cluster with the same identity.
type CloudCredentials struct {
	// Provider is aws, gcp or azure.
	Provider string `yaml:"provider"`
	// Server is the API server's https URL; with CertificateAuthorityData,
	// or neither (looked up).
	Server string `yaml:"server,omitempty"`
	// CertificateAuthorityData is the API server's CA, base64 PEM as in a
	// kubeconfig.
	CertificateAuthorityData string `yaml:"certificateAuthorityData,omitempty"`
	// Cluster names the cloud's cluster, as Flux's kubeConfig ConfigMap
	// does: for aws the EKS cluster's name or ARN (the token names it,
	// x-k8s-aws-id); for gcp projects/<project>/locations/<location>/clusters/<name>;
	// for azure the AKS resource ID
	// /subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.ContainerService/managedClusters/<name>.
	// Required for aws, and for gcp and azure when the endpoint is looked up.
	Cluster string `yaml:"cluster,omitempty"`
	// Region is, for aws, the STS region; default: the ARN's, else
	// AWS_REGION.
	Region string `yaml:"region,omitempty"`
	// Audience is, for azure, the application whose token is requested;
	// default AKSServerApplication.
	Audience string `yaml:"audience,omitempty"`
}

// TokenRenewal names the ServiceAccount, on the cluster itself, whose token
// the kubeconfig holds. regatta requests fresh bound tokens for it
// (TokenRequest) with the token in use, before that one expires.
type TokenRenewal struct {
	ServiceAccount ServiceAccountRef `yaml:"serviceAccount"`
	// Expiration is the lifetime of each requested token; default 1h, at
	// least 10m (the API server's minimum).
	Expiration string `yaml:"expiration,omitempty"`
}

// ServiceAccountRef names a ServiceAccount.
type ServiceAccountRef struct {
	Namespace string `yaml:"namespace"`
	Name      string `yaml:"name"`
}

// DefaultTokenExpiration is the lifetime of a renewed token when
// renewToken.expiration is unset.
const DefaultTokenExpiration = time.Hour

// minTokenExpiration is the shortest token a TokenRequest may ask for.
const minTokenExpiration = 10 * time.Minute

// TokenExpiration returns renewToken.expiration, defaulted.
func (r *TokenRenewal) TokenExpiration() time.Duration {
	d, err := time.ParseDuration(r.Expiration)
	if err != nil || d <= 0 {
		return DefaultTokenExpiration
	}
	return d
}

// LooksUp reports whether the endpoint and CA are looked up from the
// cloud: neither is given.
func (c *CloudCredentials) LooksUp() bool {
	return c.Server == "" && c.CertificateAuthorityData == ""
}

// The forms of cloud.cluster for gcp and azure (ARM resource IDs are
// case-insensitive).
var (
	gkeClusterRE = regexp.MustCompile(`^projects/[a-z0-9.:-]+/locations/[a-z0-9-]+/clusters/[a-z0-9-]+$`)
	aksClusterRE = regexp.MustCompile(`(?i)^/subscriptions/[^/?#]+/resourceGroups/[^/?#]+/providers/Microsoft\.ContainerService/managedClusters/[^/?#]+$`)
)

// CAData returns the decoded certificateAuthorityData.
func (c *CloudCredentials) CAData() []byte {
	b, _ := base64.StdEncoding.DecodeString(c.CertificateAuthorityData)
	return b
}

func validateCredentials(rep report, k *KubeconfigSource, secretRefSet bool) {
	if k.Cloud != nil {
		if secretRefSet {
			rep.errorf("spec.kubeconfig.cloud", "cloud and secretRef are exclusive: a cluster is reached one way")
		}
		if k.RenewToken != nil {
			rep.errorf("spec.kubeconfig.renewToken", "renews the token of a kubeconfig Secret; a cloud cluster's tokens are renewed anyway")
		}
		validateCloud(rep, k.Cloud)
	}
	if r := k.RenewToken; r != nil {
		checkDNS(rep, "spec.kubeconfig.renewToken.serviceAccount.namespace", r.ServiceAccount.Namespace, validation.IsDNS1123Label)
		checkDNS(rep, "spec.kubeconfig.renewToken.serviceAccount.name", r.ServiceAccount.Name, validation.IsDNS1123Subdomain)
		if d, err := time.ParseDuration(r.Expiration); r.Expiration != "" && (err != nil || d < minTokenExpiration) {
			rep.errorf("spec.kubeconfig.renewToken.expiration", "%q is not a duration of at least 10m such as 1h", r.Expiration)
		}
	}
}

func validateCloud(rep report, c *CloudCredentials) {
	const f = "spec.kubeconfig.cloud."
	checkEnum(rep, f+"provider", c.Provider, ProviderAWS, ProviderGCP, ProviderAzure)
	if !c.LooksUp() {
		if u, err := url.Parse(c.Server); err != nil || u.Scheme != "https" || u.Host == "" {
			rep.errorf(f+"server", "%q is not an https URL such as https://ABC.gr7.eu-west-1.eks.amazonaws.com (or leave server and certificateAuthorityData out to look them up by cluster)", c.Server)
		}
		if msg := checkCA(c.CertificateAuthorityData); msg != "" {
			rep.errorf(f+"certificateAuthorityData", "%s", msg)
		}
	}
	validateCloudCluster(rep, c)
	if c.Provider != ProviderAWS && c.Region != "" {
		rep.errorf(f+"region", "read for aws only (gcp and azure name the location in cluster)")
	}
	if c.Provider != ProviderAzure && c.Audience != "" {
		rep.errorf(f+"audience", "read for azure only")
	}
}

// validateCloudCluster checks cloud.cluster: required for aws (the token
// names it) and, to look the endpoint up, for gcp and azure, in the form
// of the provider's resource names.
func validateCloudCluster(rep report, c *CloudCredentials) {
	const f = "spec.kubeconfig.cloud.cluster"
	forms := map[string]struct {
		re   *regexp.Regexp
		form string
	}{
		ProviderGCP:   {gkeClusterRE, "projects/<project>/locations/<location>/clusters/<name>"},
		ProviderAzure: {aksClusterRE, "/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.ContainerService/managedClusters/<name>"},
	}
	form, known := forms[c.Provider]
	switch {
	case c.Provider == ProviderAWS && c.Cluster == "":
		rep.errorf(f, "required for aws: the EKS cluster's name or ARN, which the token names")
	case known && c.Cluster == "" && c.LooksUp():
		rep.errorf(f, "required to look the endpoint up: %s (or give server and certificateAuthorityData)", form.form)
	case known && c.Cluster != "" && !form.re.MatchString(c.Cluster):
		rep.errorf(f, "%q is not of the form %s", c.Cluster, form.form)
	}
}

// checkCA returns why data is not base64 PEM certificates, or "".
func checkCA(data string) string {
	if data == "" {
		return "required: the API server's CA, base64 PEM as in a kubeconfig"
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
	if err != nil {
		return "not base64"
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return "not a PEM certificate"
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return fmt.Sprintf("not a valid certificate: %v", err)
	}
	return ""
}
