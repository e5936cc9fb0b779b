package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// FluxOptions configures the health phase's Flux method: kustomize-controller
// built from its own repository (never a dependency of regatta's module)
// against a management kube-apiserver of its own, fed without a
// source-controller: the bench writes the GitRepository's artifact into its
// status and serves the tarball, as Flux's own tests drive the controller.
type FluxOptions struct {
	// Controller is kustomize-controller's binary; empty skips Flux.
	Controller string
	// CRDDirs hold the CRD YAML to install: kustomize-controller's and
	// source-controller's config/crd/bases.
	CRDDirs []string
	// Concurrent is --concurrent; 0 is every Kustomization at once, as
	// regatta works on every (cluster, profile) pair of a wave at once.
	Concurrent int
}

func (o FluxOptions) concurrent(clusters, profiles int) int {
	if o.Concurrent > 0 {
		return o.Concurrent
	}
	return clusters * profiles
}

// fluxNamespace holds the management cluster's Flux objects.
const fluxNamespace = "flux-system"

var (
	gitRepositoryGVK = schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepository"}
	kustomizationGVK = schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}
)

// fluxEnv is one Flux turn's management cluster, artifact server and
// controller.
type fluxEnv struct {
	// env is the management cluster's environment when the turn started
	// it (the health phase); nil when the caller owns it (the fleet phase).
	env   *testenv.Env
	k     client.Client
	srv   *httptest.Server
	dir   string
	ctrl  *Child
	names []string // Kustomizations
	// poll is how often waitReady lists the Kustomizations.
	poll time.Duration
}

// flux times Flux's kustomize-controller: one Kustomization per cluster and
// profile (wait: true, prune: true) on the GitRepository's artifact, first
// one whose paths hold nothing (untimed), then the fleet's: from writing
// the new artifact into the GitRepository's status to every Kustomization
// Ready at it and every Deployment Available.
func (r *healthRound) flux(ctx context.Context) (HealthSample, error) {
	f := r.fleet("hf")
	fx, err := startFlux(ctx, r.o, filepath.Join(r.dir, "flux"), f)
	if err != nil {
		return HealthSample{}, err
	}
	defer fx.stop()
	empty, err := fx.publish(ctx, emptyPaths(f))
	if err != nil {
		return HealthSample{}, err
	}
	if err := fx.createKustomizations(ctx, healthKustomizations(f)); err != nil {
		return HealthSample{}, err
	}
	if _, err := fx.waitReady(ctx, empty, time.Now()); err != nil {
		return HealthSample{}, fmt.Errorf("empty revision: %w", err)
	}
	cpu := ReadCPUUse()
	start := time.Now()
	avail := r.poll(f).Start(ctx, start)
	rev, err := fx.publish(ctx, f.Files())
	if err != nil {
		return HealthSample{}, err
	}
	ready, err := fx.waitReady(ctx, rev, start)
	if err != nil {
		return HealthSample{}, err
	}
	s := HealthSample{ReadySecs: ready.Seconds()}
	a := <-avail
	s.fill(a.Times)
	s.CPU = ReadCPUUse().Sub(cpu)
	return s, a.Err
}

// fluxPath is the folder a cluster's Kustomization of a profile builds:
// the overlay of the cluster's variant.
func fluxPath(profile string, c FleetCluster) string { return "./" + OverlayDir(profile, c.Variant) }

// emptyPaths is a tree where every Kustomization's path builds nothing.
func emptyPaths(f Fleet) map[string]string {
	files := map[string]string{}
	for i := range f.Profiles {
		for _, v := range Variants {
			files[OverlayFile(ProfileName(i), v)] = "resources: []\n"
		}
	}
	return files
}

// startFlux starts a management cluster with the clusters' kubeconfig
// Secrets, then Flux on it.
func startFlux(ctx context.Context, o HealthOptions, dir string, f Fleet) (*fluxEnv, error) {
	env, err := testenv.Start(ctx, testenv.Options{BinDir: o.Bins.Dir, EtcdBinary: o.Bins.Etcd,
		Clusters: []testenv.ClusterOptions{{Name: "flux-mgmt"}}})
	if err != nil {
		return nil, fmt.Errorf("management cluster: %w", err)
	}
	var secrets []*unstructured.Unstructured
	for _, c := range f.Clusters {
		secrets = append(secrets, kubeconfigSecretObject(c.Name, c.Kubeconfig))
	}
	fx, err := newFluxEnv(ctx, env.Cluster("flux-mgmt"), dir, o.Flux, o.Flux.concurrent(len(f.Clusters), f.Profiles), secrets...)
	if err != nil {
		env.Stop()
		return nil, err
	}
	fx.env = env
	return fx, nil
}

// newFluxEnv serves artifacts from dir/artifacts, installs Flux's CRDs, the
// namespace flux-system, objs and the GitRepository on the management
// cluster mgmt, and starts kustomize-controller with concurrent workers.
func newFluxEnv(ctx context.Context, mgmt *testenv.Cluster, dir string, o FluxOptions, concurrent int, objs ...*unstructured.Unstructured) (*fluxEnv, error) {
	if err := os.MkdirAll(filepath.Join(dir, "artifacts"), 0o755); err != nil {
		return nil, err
	}
	fx := &fluxEnv{dir: dir, poll: 100 * time.Millisecond,
		srv: httptest.NewServer(http.FileServer(http.Dir(filepath.Join(dir, "artifacts"))))}
	if err := fx.setup(ctx, mgmt, o, concurrent, objs); err != nil {
		fx.stop()
		return nil, err
	}
	return fx, nil
}

func (fx *fluxEnv) setup(ctx context.Context, mgmt *testenv.Cluster, o FluxOptions, concurrent int, objs []*unstructured.Unstructured) error {
	var err error
	if fx.k, err = client.New(mgmt.RESTConfig(), client.Options{}); err != nil {
		return err
	}
	if err := installCRDs(ctx, fx.k, o.CRDDirs); err != nil {
		return err
	}
	if err := applyAll(ctx, fx.k, []*unstructured.Unstructured{namespaceObject(fluxNamespace)}); err != nil {
		return err
	}
	if err := applyAll(ctx, fx.k, append(objs, gitRepository())); err != nil {
		return err
	}
	kubeconfig := filepath.Join(fx.dir, "mgmt.kubeconfig")
	if err := os.WriteFile(kubeconfig, mgmt.Kubeconfig(), 0o600); err != nil {
		return err
	}
	return fx.startController(o.Controller, kubeconfig, concurrent)
}

// startController runs kustomize-controller on the management cluster,
// with every namespace watched, no events receiver and no remote bases;
// its metrics are the Child's.
func (fx *fluxEnv) startController(controller, kubeconfig string, concurrent int) error {
	metrics, err := freeAddr()
	if err != nil {
		return err
	}
	health, err := freeAddr()
	if err != nil {
		return err
	}
	cmd := exec.Command(controller,
		"--watch-all-namespaces=true",
		"--events-addr=",
		"--metrics-addr="+metrics,
		"--health-addr="+health,
		fmt.Sprintf("--concurrent=%d", concurrent),
		"--no-remote-bases=true",
		"--log-encoding=json")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "RUNTIME_NAMESPACE="+fluxNamespace)
	if fx.ctrl, err = startCommand(cmd, filepath.Join(fx.dir, "kustomize-controller.log")); err != nil {
		return err
	}
	fx.ctrl.metrics = "http://" + metrics + "/metrics"
	return nil
}

func (fx *fluxEnv) stop() {
	if fx.ctrl != nil {
		fx.ctrl.Stop()
	}
	fx.srv.Close()
	if fx.env != nil {
		fx.env.Stop()
	}
}

func namespaceObject(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name}}}
}

// kubeconfigSecretObject is a cluster's kubeconfig Secret in
// flux-system, key "value".
func kubeconfigSecretObject(cluster string, kubeconfig []byte) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": cluster + "-kubeconfig", "namespace": fluxNamespace},
		"stringData": map[string]any{"value": string(kubeconfig)}}}
}

func gitRepository() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "fleet", "namespace": fluxNamespace},
		"spec": map[string]any{"url": "https://git.example/fleet.git", "interval": "1h",
			"ref": map[string]any{"branch": "main"}},
	}}
	u.SetGroupVersionKind(gitRepositoryGVK)
	return u
}

// FluxInterval is the interval of the bench's Kustomizations: only a new
// artifact starts a reconcile within it, so it is also how often Flux
// corrects drift here. The fleet phase's like-for-like regatta run takes
// it as its drift interval.
const FluxInterval = time.Hour

// fluxKustomization is a Kustomization of the GitRepository's path for
// the cluster whose kubeconfig Secret is <cluster>-kubeconfig: interval
// FluxInterval, wait and prune.
func fluxKustomization(name, path, cluster string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name, "namespace": fluxNamespace},
		"spec": map[string]any{
			"interval":  FluxInterval.String(),
			"timeout":   "5m",
			"path":      path,
			"prune":     true,
			"wait":      true,
			"sourceRef": map[string]any{"kind": "GitRepository", "name": "fleet"},
			"kubeConfig": map[string]any{
				"secretRef": map[string]any{"name": cluster + "-kubeconfig"},
			},
		},
	}}
	u.SetGroupVersionKind(kustomizationGVK)
	return u
}

// healthKustomizations are the health phase's: one per cluster and
// profile.
func healthKustomizations(f Fleet) []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	for _, c := range f.Clusters {
		for i := range f.Profiles {
			p := ProfileName(i)
			objs = append(objs, fluxKustomization(c.Name+"-"+p, fluxPath(p, c), c.Name))
		}
	}
	return objs
}

// createKustomizations creates objs and waits for them by name.
func (fx *fluxEnv) createKustomizations(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, k := range objs {
		fx.names = append(fx.names, k.GetName())
	}
	return applyAll(ctx, fx.k, objs)
}

// publish writes a tree's artifact, serves it and records it in the
// GitRepository's status, as source-controller does; it returns the
// artifact's revision.
func (fx *fluxEnv) publish(ctx context.Context, files map[string]string) (string, error) {
	a, err := NewFluxArtifact(files)
	if err != nil {
		return "", err
	}
	name := a.Digest[len("sha256:"):] + ".tar.gz"
	if err := os.WriteFile(filepath.Join(fx.dir, "artifacts", name), a.Data, 0o644); err != nil {
		return "", err
	}
	repo := gitRepository()
	if err := fx.k.Get(ctx, client.ObjectKeyFromObject(repo), repo); err != nil {
		return "", err
	}
	url := fx.srv.URL + "/" + name
	now := time.Now().UTC().Format(time.RFC3339)
	repo.Object["status"] = map[string]any{
		"observedGeneration": repo.GetGeneration(),
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Succeeded",
			"message": "stored artifact for revision '" + a.Revision + "'", "lastTransitionTime": now,
			"observedGeneration": repo.GetGeneration()}},
		"artifact": map[string]any{"path": name, "url": url, "revision": a.Revision, "digest": a.Digest,
			"lastUpdateTime": now, "size": int64(len(a.Data))},
	}
	if err := fx.k.Status().Update(ctx, repo); err != nil {
		return "", fmt.Errorf("GitRepository status: %w", err)
	}
	return a.Revision, nil
}

// waitReady polls the Kustomizations every fx.poll until every one is
// Ready with rev applied; it returns when, from start.
func (fx *fluxEnv) waitReady(ctx context.Context, rev string, start time.Time) (time.Duration, error) {
	tick := time.NewTicker(fx.poll)
	defer tick.Stop()
	last := "no list yet"
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kustomizationGVK.GroupVersion().WithKind("KustomizationList"))
		if err := fx.k.List(ctx, list, client.InNamespace(fluxNamespace)); err != nil {
			last = err.Error()
		} else if done, why := kustomizationsReady(list.Items, len(fx.names), rev); done {
			return time.Since(start), nil
		} else {
			last = why
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("Kustomizations not Ready at %s: %w: %s", rev, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// kustomizationsReady reports whether want Kustomizations are Ready with
// rev applied, else the first that is not and why.
func kustomizationsReady(items []unstructured.Unstructured, want int, rev string) (bool, string) {
	ready := 0
	first := ""
	for i := range items {
		k := &items[i]
		applied, _, _ := unstructured.NestedString(k.Object, "status", "lastAppliedRevision")
		st, msg := readyCondition(k)
		if applied == rev && st == "True" {
			ready++
		} else if first == "" {
			first = fmt.Sprintf("%s: applied %q, Ready %s: %s", k.GetName(), applied, st, msg)
		}
	}
	if ready == want && len(items) == want {
		return true, ""
	}
	return false, fmt.Sprintf("%d of %d Ready; %s", ready, want, first)
}

// readyCondition returns the Ready condition's status and message.
func readyCondition(u *unstructured.Unstructured) (string, string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Ready" {
			s, _ := m["status"].(string)
			msg, _ := m["message"].(string)
			return s, msg
		}
	}
	return "Unknown", "no Ready condition"
}
