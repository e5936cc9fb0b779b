package cloud_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig/cloud"
	"github.com/regatta-dev/regatta/reconciler/kubeconfig/token"
	"github.com/regatta-dev/regatta/spec"
)

// Token lifetimes of the stand-ins: short, so that renewals happen within
// a test. EKS accepts a presigned request 15 minutes and its token is used
// 14; here 8 s and 7 s.
const (
	tokenLifetime    = 8 * time.Second
	awsClientLifeime = 7 * time.Second
)

const (
	roleARN   = "arn:aws:iam::111122223333:role/regatta"
	eksARN    = "arn:aws:eks:eu-west-1:111122223333:cluster/prod"
	gsa       = "regatta@regatta-test.iam.gserviceaccount.com"
	tenant    = "72f988bf-0000-0000-0000-000000000001"
	azureApp  = "5e1b2c3d-0000-0000-0000-000000000002"
	saProject = "eyJhbGciOiJSUzI1NiJ9.projected-serviceaccount-token.sig"
)

var (
	env   *testenv.Env
	sts   *stsStandIn
	gcp   *metadataStandIn
	entra *entraStandIn
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	log.SetOutput(io.Discard) // the Git server logs every request
	dir, err := os.MkdirTemp("", "regatta-cloud-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	sts = newSTS(roleARN, saProject, "prod", tokenLifetime)
	gcp = newMetadata(gsa, tokenLifetime)
	entra = newEntra(tenant, azureApp, saProject, tokenLifetime)
	wh := newWebhook(sts, gcp, entra)
	for _, s := range []interface{ Close() }{sts.srv, gcp.srv, entra.srv, wh.srv} {
		defer s.Close()
	}
	if err := workloadIdentityEnv(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	var clusters []testenv.ClusterOptions
	for _, p := range providers {
		clusters = append(clusters, testenv.ClusterOptions{Name: p.cluster, TokenWebhook: wh.srv.URL})
	}
	env, err = testenv.Start(ctx, testenv.Options{Clusters: clusters})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	defer env.Stop()
	if err := grantView(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	return m.Run()
}

// workloadIdentityEnv sets what the pod webhooks of EKS (IRSA), GKE and
// AKS set in regatta's pod, pointed at the stand-ins, and hides the
// machine's own cloud configuration.
func workloadIdentityEnv(dir string) error {
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(saProject), 0o600); err != nil {
		return err
	}
	vars := map[string]string{
		"AWS_ROLE_ARN": roleARN, "AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile, "AWS_ENDPOINT_URL_STS": sts.srv.URL,
		"AWS_ENDPOINT_URL_EKS": sts.srv.URL, "AWS_ENDPOINT_URL": "",
		"AWS_CONFIG_FILE": filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "none"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CA_BUNDLE": "", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "",
		"GCE_METADATA_HOST": strings.TrimPrefix(gcp.srv.URL, "http://"), "GOOGLE_APPLICATION_CREDENTIALS": "",
		"HOME": dir, "CLOUDSDK_CONFIG": filepath.Join(dir, "gcloud"),
		"AZURE_AUTHORITY_HOST": entra.srv.URL + "/", "AZURE_TENANT_ID": tenant, "AZURE_CLIENT_ID": azureApp,
		"AZURE_FEDERATED_TOKEN_FILE": tokenFile,
	}
	for k, v := range vars {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

// grantView gives each cluster's cloud identity what regatta applies (a
// cluster grants its cloud identities Kubernetes RBAC as it would a user).
func grantView() error {
	for _, p := range providers {
		cs, err := kubernetes.NewForConfig(env.Cluster(p.cluster).RESTConfig())
		if err != nil {
			return err
		}
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "cloud-identity"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: p.user}}}
		if _, err = cs.RbacV1().ClusterRoleBindings().Create(context.Background(), crb, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// options are the fetchers' options of every test: the stand-ins' TLS
// client and management APIs (EKS's is AWS_ENDPOINT_URL_EKS).
func options() cloud.Options {
	return cloud.Options{HTTPClient: entra.srv.Client(), AWSTokenLifetime: awsClientLifeime,
		GKEEndpoint: gcp.srv.URL, ARMEndpoint: entra.srv.URL}
}

// clientFor builds what the daemon builds for a cloud cluster: a fetcher
// of the provider and a renewing token source in a REST config.
func clientFor(t *testing.T, name, cluster string, c *spec.CloudCredentials) kubernetes.Interface {
	t.Helper()
	cl := env.Cluster(cluster)
	c.Server = cl.URL()
	f, err := cloud.NewFetcher(name, c, options())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(token.Config(c.Server, cl.CAData(), token.NewSource(t.Context(), f, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// whoAmI asks the API server who the client is and reads namespaces.
func whoAmI(ctx context.Context, cs kubernetes.Interface) (string, error) {
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}

// providers are the three providers, with the counts of their stand-ins:
// tokens issued (or, for EKS, verified) and expired tokens presented.
var providers = []struct {
	name    string
	cluster string // the test API server of the provider's cluster
	creds   spec.CloudCredentials
	user    string
	tokens  func() int
	expired func() int
}{
	{"aws", "eks", spec.CloudCredentials{Provider: spec.ProviderAWS, Cluster: eksARN}, "aws:" + roleARN + "/regatta",
		func() int { return sts.Tokens() }, func() int { return sts.Expired() }},
	{"gcp", "gke", spec.CloudCredentials{Provider: spec.ProviderGCP}, "gcp:" + gsa,
		func() int { return gcp.Issued() }, func() int { return gcp.Expired() }},
	{"azure", "aks", spec.CloudCredentials{Provider: spec.ProviderAzure}, "azure:" + azureApp,
		func() int { return entra.Issued() }, func() int { return entra.Expired() }},
}

// TestCloudTokensRenewedBeforeExpiry: each provider's SDK gets its token
// from the stand-in with the pod's workload identity, the API server's
// webhook verifies it there, and the token is renewed before it expires:
// every request over four renewals succeeds, and no expired token is ever
// presented. (The API server keeps a verified token 10 s, so a client that
// did not renew fails at the first check after that: about 10 s in.)
func TestCloudTokensRenewedBeforeExpiry(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			creds := p.creds
			cs := clientFor(t, p.name+"-1", p.cluster, &creds)
			first := p.tokens()
			deadline := time.Now().Add(10 * tokenLifetime)
			for p.tokens() < first+4 {
				user, err := whoAmI(t.Context(), cs)
				if err != nil {
					t.Fatalf("request failed after %d tokens: %v", p.tokens()-first, err)
				}
				if user != p.user {
					t.Fatalf("authenticated as %q, want %q", user, p.user)
				}
				if time.Now().After(deadline) {
					t.Fatalf("only %d tokens in %s", p.tokens()-first, 10*tokenLifetime)
				}
				time.Sleep(testenv.PollInterval)
			}
			if n := p.expired(); n > 0 {
				t.Fatalf("%d expired tokens reached the webhook", n)
			}
		})
	}
}

// TestRevokedIdentityFailsOnlyItsCluster: once a provider's token service
// refuses regatta's identity (the AWS role's trust, the GKE service
// account binding, the Entra federated credential), that cluster's
// requests fail with an error that names the provider, the cluster and
// what is missing, and never a token; the other providers' clusters go on.
func TestRevokedIdentityFailsOnlyItsCluster(t *testing.T) {
	missing := map[string][]string{
		"aws":   {"AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AccessDenied"},
		"gcp":   {"GKE Workload Identity", "GCE_METADATA_HOST set", "not bound to a Google service account"},
		"azure": {"AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE set", "6dae42f8-4368-4678-94ff-3960e28e3630/.default", "AADSTS700016"},
	}
	revoke := map[string]func(bool){"aws": sts.Revoke, "gcp": gcp.Revoke, "azure": entra.Revoke}
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			clients := map[string]kubernetes.Interface{}
			for _, q := range providers {
				creds := q.creds
				clients[q.name] = clientFor(t, q.name+"-revoked-"+p.name, q.cluster, &creds)
				if _, err := whoAmI(t.Context(), clients[q.name]); err != nil {
					t.Fatalf("%s before the revocation: %v", q.name, err)
				}
			}
			revoke[p.name](true)
			t.Cleanup(func() { revoke[p.name](false) })
			// The API server keeps a verified token 10 s; then the token
			// is refused (401) and no new one can be had.
			var last error
			prefix := fmt.Sprintf("cluster %s-revoked-%s: %s credentials", p.name, p.name, p.name)
			testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
				_, last = whoAmI(ctx, clients[p.name])
				if last == nil || !strings.Contains(last.Error(), prefix) {
					return fmt.Errorf("error %v, want one naming the provider and cluster (%s)", last, prefix)
				}
				return nil
			})
			t.Logf("the %s cluster's error: %v", p.name, last)
			for _, want := range missing[p.name] {
				if !strings.Contains(last.Error(), want) {
					t.Errorf("error %q does not say what is missing (%s)", last, want)
				}
			}
			for _, secret := range []string{"k8s-aws-v1.", "ASIA", "ya29.", "aad.", saProject} {
				if strings.Contains(last.Error(), secret) {
					t.Errorf("error %q shows a credential (%s)", last, secret)
				}
			}
			for _, q := range providers {
				if q.name == p.name {
					continue
				}
				if _, err := whoAmI(t.Context(), clients[q.name]); err != nil {
					t.Fatalf("%s failed after the %s identity was revoked: %v", q.name, p.name, err)
				}
			}
		})
	}
}
