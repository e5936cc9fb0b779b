package testenv

import (
	"context"
	"crypto/tls"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"k8s.io/client-go/kubernetes"
)

// BehaviorAnnotation, set on a Pod (or a workload's Pod template), chooses
// what kwok makes of its containers: BehaviorRun, BehaviorNeverReady or
// BehaviorCrash. Without it, the image decides (see kwok_stages.yaml and
// docs/testing.md): an image repository named "crash" or "never-ready"
// (e.g. registry.test/crash:v2) behaves so, any other runs.
const BehaviorAnnotation = "testenv.regatta.dev/behavior"

// What a Pod's containers do on a controller-backed cluster.
const (
	// BehaviorRun: the Pod runs and turns Ready; a Job's Pod then succeeds.
	BehaviorRun = "run"
	// BehaviorNeverReady: the Pod runs; its containers never pass readiness.
	BehaviorNeverReady = "never-ready"
	// BehaviorCrash: the containers exit with code 1. Under restartPolicy
	// Never the Pod fails; otherwise they crash-loop (restartCount grows,
	// waiting reason CrashLoopBackOff, Ready false).
	BehaviorCrash = "crash"
)

//go:embed kwok_stages.yaml
var kwokStages string

// behaviorExpr is the jq expression that the stages use for BEHAVIOR.
const behaviorExpr = `(.metadata.annotations["` + BehaviorAnnotation + `"] // ` +
	`([.spec.containers[].image | capture("(^|/)(?<r>crash|never-ready)([:@]|$)") | .r] | first) // "run")`

// controllersAPIServerFlags are the API server flags of a cluster with
// controllers. kwok's informers (client-go v0.36) ask for streaming lists
// (WatchList); Debian's etcd 3.4 has no progress notifications, so the API
// server accepts the watch and then ends it with "the required storage
// feature RequestWatchProgress is disabled", and the informers retry with a
// growing back-off: kwok saw new Pods only at its next retry, seconds to a
// minute late, in batches. With WatchList off the server refuses the
// streaming list at once and the informers fall back to list and watch.
var controllersAPIServerFlags = []string{"--feature-gates=WatchList=false"}

// controlPlane is the processes that make a cluster behave like a real one.
type controlPlane struct {
	procs []*process // stopped in reverse order
}

func (cp *controlPlane) add(p *process) { cp.procs = append(cp.procs, p) }

// stop stops the processes, the last started first, and waits for them.
func (cp *controlPlane) stop() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		cp.procs[i].stop(stopGrace)
	}
	cp.procs = nil
}

// controlPlaneFiles are what the control plane's processes read.
type controlPlaneFiles struct {
	kubeconfig string // admin, pointing at the API server's current URL
	caFile     string
	stages     string
}

// startControlPlane starts kube-controller-manager, kube-scheduler and kwok
// against the running API server, creates the simulated nodes on the first
// start, and waits until the controllers serve /healthz, every node is
// Ready and the default ServiceAccount exists. c.mu is held.
func (c *Cluster) startControlPlane(ctx context.Context) (*controlPlane, error) {
	bins, err := c.bins.controlPlane(c.version)
	if err != nil {
		return nil, err
	}
	files, err := c.writeControlPlaneFiles()
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(c.restConfig(c.url()))
	if err != nil {
		return nil, err
	}
	if err := ensureNodes(ctx, cs, *c.controllers, c.version); err != nil {
		return nil, err
	}
	cp := &controlPlane{}
	if err := c.startControlPlaneProcs(ctx, cp, bins, files); err != nil {
		cp.stop()
		return nil, err
	}
	if err := c.waitControlPlane(ctx, cp, cs); err != nil {
		cp.stop()
		return nil, err
	}
	return cp, nil
}

// startControlPlaneProcs starts the three processes side by side and waits
// for the two that serve /healthz.
func (c *Cluster) startControlPlaneProcs(ctx context.Context, cp *controlPlane, bins controlPlaneBinaries, files controlPlaneFiles) error {
	kwok, err := startProcess("kwok", filepath.Join(c.dir, "kwok.log"), nil, bins.kwok, kwokArgs(files)...)
	if err != nil {
		return err
	}
	cp.add(kwok)
	var kcm, sched *process
	var kcmErr, schedErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		kcm, kcmErr = c.startServing(ctx, "kube-controller-manager", bins.controllerManager,
			func(port int) []string { return c.controllerManagerArgs(files, port) })
	})
	wg.Go(func() {
		sched, schedErr = c.startServing(ctx, "kube-scheduler", bins.scheduler,
			func(port int) []string { return c.schedulerArgs(files, port) })
	})
	wg.Wait()
	for _, p := range []*process{kcm, sched} {
		if p != nil {
			cp.add(p)
		}
	}
	return errors.Join(kcmErr, schedErr)
}

// startServing starts a component that serves HTTPS /healthz on a port it
// is given and waits until it answers ok, moving to another port when its
// port was taken meanwhile.
func (c *Cluster) startServing(ctx context.Context, name, path string, args func(port int) []string) (*process, error) {
	var err error
	for range 3 {
		var port int
		if port, err = c.ports.free(); err != nil {
			return nil, err
		}
		var proc *process
		if proc, err = startProcess(name, filepath.Join(c.dir, name+".log"), nil, path, args(port)...); err != nil {
			return nil, err
		}
		url := "https://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
		if err = waitReady(ctx, proc, c.timeout, func(ctx context.Context) error { return healthz(ctx, url) }); err == nil {
			return proc, nil
		}
		proc.stop(stopGrace)
		if !errors.Is(err, errAddrInUse) {
			break
		}
	}
	return nil, fmt.Errorf("start %s: %w", name, err)
}

// waitControlPlane waits until kwok has made every node Ready, the
// controller manager has lifted their not-ready taints and created the
// default ServiceAccount: then Pods can be created, scheduled and run.
func (c *Cluster) waitControlPlane(ctx context.Context, cp *controlPlane, cs kubernetes.Interface) error {
	kwok, kcm := cp.procs[0], cp.procs[1]
	want := c.controllers.Nodes
	if err := waitReady(ctx, kwok, c.timeout, func(ctx context.Context) error {
		return nodesReady(ctx, cs, want)
	}); err != nil {
		return fmt.Errorf("kwok nodes: %w", err)
	}
	return waitReady(ctx, kcm, c.timeout, func(ctx context.Context) error {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", getOptions)
		return err
	})
}

// healthz asks a component's /healthz; its serving certificate is
// self-signed, so it is not verified.
func healthz(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a local test process
		DisableKeepAlives: true,
	}}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/healthz: %s %s", resp.Status, body)
	}
	return nil
}

// writeControlPlaneFiles writes the admin kubeconfig (the URL may change
// across restarts), the CA bundle and kwok's stages into the cluster's folder.
func (c *Cluster) writeControlPlaneFiles() (controlPlaneFiles, error) {
	f := controlPlaneFiles{
		kubeconfig: filepath.Join(c.dir, "admin.kubeconfig"),
		caFile:     filepath.Join(c.dir, "ca.crt"),
		stages:     filepath.Join(c.dir, "kwok-stages.yaml"),
	}
	writes := map[string][]byte{
		f.kubeconfig: c.kubeconfig(c.url()),
		f.caFile:     c.files.caPEM,
		f.stages:     []byte(strings.ReplaceAll(kwokStages, "'BEHAVIOR'", "'"+behaviorExpr+"'")),
	}
	for path, data := range writes {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return f, fmt.Errorf("write control plane files: %w", err)
		}
	}
	return f, nil
}

// controllerManagerArgs runs every default controller. The node lifecycle
// controller removes the not-ready taint the API server puts on a new node
// once kwok makes it Ready; its grace period is long, so that a lease renewal
// kwok makes late on a loaded machine never taints a node and evicts Pods in
// the middle of a test.
func (c *Cluster) controllerManagerArgs(f controlPlaneFiles, port int) []string {
	args := []string{
		"--kubeconfig=" + f.kubeconfig,
		"--authentication-kubeconfig=" + f.kubeconfig,
		"--authorization-kubeconfig=" + f.kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(c.dir, "kube-controller-manager-certs"),
		"--node-monitor-grace-period=10m",
		"--service-account-private-key-file=" + c.files.saPrivate,
		"--root-ca-file=" + f.caFile,
		"--use-service-account-credentials=false",
		"--kube-api-qps=100",
		"--kube-api-burst=200",
		"--profiling=false",
	}
	return append(args, c.controllers.ControllerManagerFlags...)
}

func (c *Cluster) schedulerArgs(f controlPlaneFiles, port int) []string {
	return []string{
		"--kubeconfig=" + f.kubeconfig,
		"--authentication-kubeconfig=" + f.kubeconfig,
		"--authorization-kubeconfig=" + f.kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(c.dir, "kube-scheduler-certs"),
		"--profiling=false",
	}
}

// kwokArgs makes kwok manage the nodes ensureNodes creates and play the
// stages of kwok_stages.yaml on them and their Pods. kwok serves nothing.
func kwokArgs(f controlPlaneFiles) []string {
	return []string{
		"--kubeconfig=" + f.kubeconfig,
		"--config=" + f.stages,
		"--manage-nodes-with-label-selector=" + nodeLabel + "=" + nodeLabelValue,
		"--cidr=10.244.0.0/16",
		"--node-lease-duration-seconds=40",
	}
}

// ProcessRSS returns the resident memory in bytes of each process of the
// cluster by name: kube-apiserver and, with Controllers,
// kube-controller-manager, kube-scheduler and kwok.
func (c *Cluster) ProcessRSS() (map[string]int64, error) {
	procs := c.processes()
	if len(procs) == 0 {
		return nil, fmt.Errorf("cluster %s is stopped", c.name)
	}
	out := map[string]int64{}
	for _, p := range procs {
		rss, err := rssBytes(p.pid())
		if err != nil {
			return nil, fmt.Errorf("%s of cluster %s: %w", p.name, c.name, err)
		}
		out[p.name] = rss
	}
	return out, nil
}

// PIDs returns the process id of each running process of the cluster by
// name, as ProcessRSS names them.
func (c *Cluster) PIDs() map[string]int {
	out := map[string]int{}
	for _, p := range c.processes() {
		out[p.name] = p.pid()
	}
	return out
}

// processes returns the cluster's running processes, the API server first.
func (c *Cluster) processes() []*process {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return nil
	}
	procs := []*process{c.proc}
	if c.cp != nil {
		procs = append(procs, c.cp.procs...)
	}
	return procs
}

// HasControllers reports whether the cluster runs controllers and kwok nodes.
func (c *Cluster) HasControllers() bool { return c.controllers != nil }
