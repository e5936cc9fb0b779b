package cloud_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The stand-ins' management APIs (EKS DescribeCluster, GKE clusters.get,
// ARM managedClusters get and listClusterUserCredential) answer from a
// directory of clusters the test fills, after checking the caller's
// credentials as the clouds do: a SigV4 signature of the issued role
// credentials, a bearer token the metadata server issued, an Entra token
// issued for the ARM scope.

// directory is what a management API knows of clusters: each one's
// endpoint and CA, those the identity may not read, and how often each was
// looked up.
type directory struct {
	mu       sync.Mutex
	clusters map[string]directoryEntry
	denied   map[string]bool
	lookups  map[string]int
}

type directoryEntry struct {
	server  string // host:port, as the clouds answer
	ca      []byte // PEM
	private bool   // GKE: only the private endpoint is answered
}

func newDirectory() *directory {
	return &directory{clusters: map[string]directoryEntry{}, denied: map[string]bool{}, lookups: map[string]int{}}
}

// Set makes the cluster id answer server (an https URL) and ca.
func (d *directory) Set(id, server string, ca []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clusters[id] = directoryEntry{server: strings.TrimPrefix(server, "https://"), ca: ca}
}

// SetPrivate makes the GKE cluster id answer server as its private
// endpoint only (endpoint empty), as a cluster without a public one does.
func (d *directory) SetPrivate(id, server string, ca []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clusters[id] = directoryEntry{server: strings.TrimPrefix(server, "https://"), ca: ca, private: true}
}

// Deny refuses the identity to read cluster id.
func (d *directory) Deny(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.denied[id] = true
}

// Lookups returns how often cluster id was read.
func (d *directory) Lookups(id string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lookups[id]
}

// get returns the entry of id (found false when unknown, denied when
// refused), counting a look-up when count is set (the AKS credentials
// call, which follows the read, is not counted).
func (d *directory) get(id string, count bool) (e directoryEntry, found, denied bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if count {
		d.lookups[id]++
	}
	e, found = d.clusters[id]
	return e, found, d.denied[id]
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// describeCluster serves EKS DescribeCluster (GET /clusters/<name>) to a
// request signed with credentials the stand-in issued, keyed
// <region>/<name>.
func (s *stsStandIn) describeCluster(w http.ResponseWriter, r *http.Request) {
	eksError := func(code int, errType, msg string) {
		w.Header().Set("X-Amzn-ErrorType", errType+":http://internal.amazon.com/coral/com.amazonaws.eks/")
		writeJSON(w, code, map[string]any{"message": msg})
	}
	region, ok := s.eksSigned(r)
	if !ok {
		eksError(http.StatusForbidden, "InvalidSignatureException", "The request signature we calculated does not match the signature you provided.")
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/clusters/")
	e, found, denied := s.eks.get(region+"/"+name, true)
	switch {
	case denied:
		eksError(http.StatusForbidden, "AccessDeniedException", fmt.Sprintf("User: %s/regatta is not authorized to perform: eks:DescribeCluster on resource: arn:aws:eks:%s:111122223333:cluster/%s", s.roleARN, region, name))
	case !found:
		eksError(http.StatusNotFound, "ResourceNotFoundException", "No cluster found for name: "+name+".")
	default:
		writeJSON(w, http.StatusOK, map[string]any{"cluster": map[string]any{"name": name, "status": "ACTIVE",
			"endpoint": "https://" + e.server, "certificateAuthority": map[string]any{"data": base64.StdEncoding.EncodeToString(e.ca)}}})
	}
}

// eksSigned checks the SigV4 Authorization header of an EKS call: the
// credentials issued and not revoked, service eks, and the signature
// recomputed over the headers it signs. It returns the signing region.
func (s *stsStandIn) eksSigned(r *http.Request) (string, bool) {
	auth := r.Header.Get("Authorization")
	_, rest, _ := strings.Cut(auth, "Credential=")
	scope, _, _ := strings.Cut(rest, ",")
	parts := strings.Split(scope, "/") // key/date/region/service/aws4_request
	if len(parts) != 5 || parts[3] != "eks" {
		return "", false
	}
	s.mu.Lock()
	creds, known := s.secrets[parts[0]]
	s.mu.Unlock()
	signed, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if !known || !s.valid(parts[0]) || err != nil || time.Since(signed) > 5*time.Minute {
		return "", false
	}
	_, signedHeaders, _ := strings.Cut(auth, "SignedHeaders=")
	signedHeaders, _, _ = strings.Cut(signedHeaders, ",")
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	for _, h := range strings.Split(signedHeaders, ";") {
		if h != "host" {
			req.Header.Set(h, r.Header.Get(h))
		}
	}
	req.Header.Del("X-Amz-Date")
	req.Header.Del("X-Amz-Security-Token")
	if err := v4.NewSigner().SignHTTP(r.Context(), creds, req, emptySHA256, "eks", parts[2], signed); err != nil {
		return "", false
	}
	return parts[2], req.Header.Get("Authorization") == auth
}

const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// clustersGet serves GKE clusters.get (GET /v1/projects/.../clusters/<n>)
// to a bearer token the metadata server issued.
func (m *metadataStandIn) clustersGet(w http.ResponseWriter, r *http.Request) {
	googleError := func(code int, status, msg string) {
		writeJSON(w, code, map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !m.valid(tok) {
		googleError(http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
		return
	}
	id := strings.TrimPrefix(r.URL.Path, "/v1/")
	e, found, denied := m.gke.get(id, true)
	switch {
	case denied:
		googleError(http.StatusForbidden, "PERMISSION_DENIED", fmt.Sprintf("Required \"container.clusters.get\" permission(s) for %q.", id))
	case !found:
		googleError(http.StatusNotFound, "NOT_FOUND", "Not found: "+id+".")
	default:
		answer := map[string]any{"name": id[strings.LastIndex(id, "/")+1:], "endpoint": e.server,
			"masterAuth": map[string]any{"clusterCaCertificate": base64.StdEncoding.EncodeToString(e.ca)}}
		if e.private {
			answer["endpoint"] = ""
			answer["privateClusterConfig"] = map[string]any{"enablePrivateEndpoint": true, "privateEndpoint": e.server}
		}
		writeJSON(w, http.StatusOK, answer)
	}
}

// armScope is the scope of the stand-in's ARM tokens.
func (e *entraStandIn) armScope() string { return e.srv.URL + "/.default" }

// managedCluster serves ARM's managedClusters get and
// listClusterUserCredential to an Entra token of the ARM scope. The user
// kubeconfig holds a client key, as a local account's does: regatta must
// keep only its CA.
func (e *entraStandIn) managedCluster(w http.ResponseWriter, r *http.Request) {
	armError := func(code int, errCode, msg string) {
		writeJSON(w, code, map[string]any{"error": map[string]any{"code": errCode, "message": msg}})
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !strings.HasPrefix(tok, "arm.") || !e.valid(tok) {
		armError(http.StatusUnauthorized, "InvalidAuthenticationToken", "The access token is invalid.")
		return
	}
	if r.URL.Query().Get("api-version") == "" {
		armError(http.StatusBadRequest, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests.")
		return
	}
	id, list := strings.CutSuffix(r.URL.Path, "/listClusterUserCredential")
	action := "read"
	if list {
		action = "listClusterUserCredential/action"
	}
	en, found, denied := e.aks.get(strings.ToLower(id), !list)
	switch {
	case denied || (list && r.Method != http.MethodPost) || (!list && r.Method != http.MethodGet):
		armError(http.StatusForbidden, "AuthorizationFailed", fmt.Sprintf("The client '%s' does not have authorization to perform action 'Microsoft.ContainerService/managedClusters/%s' over scope '%s' or the scope is invalid.", e.clientID, action, id))
	case !found:
		armError(http.StatusNotFound, "ResourceNotFound", "The Resource '"+id+"' was not found.")
	case list:
		writeJSON(w, http.StatusOK, map[string]any{"kubeconfigs": []any{map[string]any{"name": "clusterUser", "value": userKubeconfig(en)}}})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "properties": map[string]any{"provisioningState": "Succeeded", "fqdn": en.server}})
	}
}

// aksUserSecret is the client key of the user kubeconfig AKS hands out: it
// must never show in an error, a status or a log.
const aksUserSecret = "aks-local-account-client-key"

func userKubeconfig(en directoryEntry) []byte {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["aks"] = &clientcmdapi.Cluster{Server: "https://" + en.server, CertificateAuthorityData: en.ca}
	kc.AuthInfos["clusterUser"] = &clientcmdapi.AuthInfo{ClientKeyData: []byte(aksUserSecret), Token: aksUserSecret}
	kc.Contexts["aks"] = &clientcmdapi.Context{Cluster: "aks", AuthInfo: "clusterUser"}
	kc.CurrentContext = "aks"
	b, _ := clientcmd.Write(*kc)
	return b
}

// armPath reports whether a path is of ARM's managedClusters.
func armPath(p string) bool {
	u, err := url.PathUnescape(p)
	return err == nil && strings.HasPrefix(u, "/subscriptions/") && strings.Contains(strings.ToLower(u), "/managedclusters/")
}
