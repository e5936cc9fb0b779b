package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ShardOptions configures the shard phase.
type ShardOptions struct {
	Clusters, Replicas int
	// Objects are the ConfigMaps of each cluster's first add-on.
	Objects       int
	LeaseDuration time.Duration
	Bins          *Binaries
	Dir           string
	Logf          func(string, ...any)
}

// ShardResult is what the shard phase measured.
type ShardResult struct {
	Clusters  int     `json:"clusters"`
	Replicas  int     `json:"replicas"`
	Objects   int     `json:"objectsPerCluster"`
	LeaseSecs float64 `json:"leaseSeconds"`
	// ConvergeSecs is from starting the replicas to every cluster at the
	// first revision (a replica works only after a lease duration of
	// membership).
	ConvergeSecs float64 `json:"convergeSeconds"`
	// TakeoverSecs is from the SIGKILL of a replica mid-rollout to the
	// last of its unfinished clusters at the new revision, applied by
	// another; Pending counts those clusters.
	TakeoverSecs float64 `json:"takeoverSeconds"`
	Victim       string  `json:"victim"`
	VictimOwned  int     `json:"victimOwned"`
	Pending      int     `json:"pending"`
	// Moved counts the clusters that changed owner when the killed
	// replica started again; RejoinSecs is from its start to the owners
	// settling (balanced, every cluster claimed once).
	Moved      int             `json:"movedOnRejoin"`
	RejoinSecs float64         `json:"rejoinSeconds"`
	Memory     []ReplicaMemory `json:"memory"`
}

// ReplicaMemory is a replica's resident memory at the end of the phase.
type ReplicaMemory struct {
	Replica  string `json:"replica"`
	Clusters int    `json:"clusters"`
	RSS      int64  `json:"rssBytes"`
	HWM      int64  `json:"hwmBytes"`
}

// sharded is the state of the shard phase.
type sharded struct {
	o       ShardOptions
	cs      *Clusters
	names   []string
	clients map[string]kubernetes.Interface
	mgmt    kubernetes.Interface
	git     *GitRepo
	args    []string
	ids     []string
	procs   map[string]*Child
}

// RunShard starts Clusters fresh API servers and a management one, and
// Replicas `regatta run --replicas-mode shard` processes sharing them; it
// times the first rollout, the takeover of a replica SIGKILLed mid-rollout
// and its rejoining.
func RunShard(ctx context.Context, o ShardOptions) (*ShardResult, error) {
	cs, err := StartClusters(ctx, o.Bins, o.Clusters+1, filepath.Join(o.Dir, "kubeconfigs"))
	if err != nil {
		return nil, err
	}
	defer cs.Stop()
	s := &sharded{o: o, cs: cs, clients: map[string]kubernetes.Interface{}, procs: map[string]*Child{}}
	res := &ShardResult{Clusters: o.Clusters, Replicas: o.Replicas, Objects: o.Objects, LeaseSecs: o.LeaseDuration.Seconds()}
	if err := s.setup(ctx); err != nil {
		return res, err
	}
	defer s.stopAll()
	if err := s.converge(ctx, res); err != nil {
		return res, err
	}
	if err := s.takeover(ctx, res); err != nil {
		return res, err
	}
	if err := s.rejoin(ctx, res); err != nil {
		return res, err
	}
	return res, s.memory(ctx, res)
}

// setup stores the clusters' kubeconfig Secrets in the management
// cluster and commits the fleet.
func (s *sharded) setup(ctx context.Context) error {
	mgmt := s.cs.Fleet[s.o.Clusters]
	var err error
	if s.mgmt, err = kubernetes.NewForConfig(s.cs.Cluster(mgmt.Name).RESTConfig()); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "regatta-system"}}
	if _, err := s.mgmt.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for _, c := range s.cs.Fleet[:s.o.Clusters] {
		s.names = append(s.names, c.Name)
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: c.Name + "-kubeconfig", Namespace: "regatta-system"},
			Data: map[string][]byte{"value": c.Kubeconfig}}
		if _, err := s.mgmt.CoreV1().Secrets("regatta-system").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			return err
		}
		if s.clients[c.Name], err = kubernetes.NewForConfig(s.cs.Cluster(c.Name).RESTConfig()); err != nil {
			return err
		}
	}
	if s.git, err = StartGitRepo(ctx, filepath.Join(s.o.Dir, "git")); err != nil {
		return err
	}
	context.AfterFunc(ctx, s.git.Close)
	if _, err := s.git.Commit(ctx, "fleet", s.files("v1", true)); err != nil {
		return err
	}
	s.args = []string{"--management-kubeconfig", s.cs.Kubeconfigs[mgmt.Name], "--replicas-mode", "shard",
		"--replica-lease-duration", s.o.LeaseDuration.String(), "--interval", "1s", "--status-interval", "2s"}
	for i := range s.o.Replicas {
		s.ids = append(s.ids, fmt.Sprintf("regatta-%d", i))
	}
	return nil
}

// files is the fleet at a version: a profile of two add-ons, Objects
// ConfigMaps, then a probe ConfigMap that says the cluster is done.
func (s *sharded) files(version string, clusters bool) map[string]string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: shard-bench}\n")
	for i := range s.o.Objects {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: bulk-%d, namespace: shard-bench}\ndata: {version: %s}\n", i, version)
	}
	files := map[string]string{
		"profiles/probe.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: probe}\nspec:\n" +
			"  clusterSelector: {matchLabels: {bench: shard}}\n  addons:\n  - name: bulk\n    manifests: {path: probe/bulk}\n" +
			"  - name: probe\n    manifests: {path: probe/probe}\n",
		"probe/bulk/objects.yaml":  b.String(),
		"probe/probe/objects.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: probe, namespace: shard-bench}\ndata: {version: " + version + "}\n",
	}
	for _, n := range s.names {
		if clusters {
			files["clusters/"+n+"/cluster.yaml"] = "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: " + n + "\n  labels: {bench: shard}\n"
		}
	}
	return files
}

func (s *sharded) start(id string) error {
	c, err := StartChild(ChildOptions{
		Regatta:       s.o.Bins.Regatta,
		RepoURL:       s.git.URL(),
		DriftInterval: 10 * time.Minute,
		Dir:           filepath.Join(s.o.Dir, id),
		Args:          append([]string{"--replica-identity", id}, s.args...),
	})
	if err == nil {
		s.procs[id] = c
	}
	return err
}

func (s *sharded) stopAll() {
	for _, c := range s.procs {
		c.Stop()
	}
}
