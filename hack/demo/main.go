// Command demo runs regatta's main job on this machine: three local
// clusters at different Kubernetes versions, the example fleet repository
// as a local Git repository whose SOPS-encrypted kubeconfig Secrets point at
// them, and `regatta run` following it. `make demo` runs it.
//
// Each cluster is a kube-apiserver with etcd, kube-controller-manager,
// kube-scheduler and two kwok nodes (internal/testenv's Controllers): the
// deployment controller makes ReplicaSets, the scheduler places their Pods
// and kwok runs them, so a Deployment is Available when its Pods are
// Ready, as on a real cluster, and an image named crash
// (registry.test/crash:…) crash-loops. Nothing here writes status. Stop it
// with Ctrl-C; it removes the clusters it started.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// demoClusters are the example's clusters, the versions they run and
// their nodes (make demo builds the controllers of each version).
var demoClusters = []testenv.ClusterOptions{
	{Name: "staging-1", Version: "v1.36.3", Controllers: &testenv.Controllers{Nodes: 2}},
	{Name: "production-eu-1", Version: "v1.37.2", Controllers: &testenv.Controllers{Nodes: 2}},
	{Name: "production-us-1", Version: "v1.35.4", Controllers: &testenv.Controllers{Nodes: 2}},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	work := filepath.Join(root, ".demo")
	say("starting 3 local clusters (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, 2 kwok nodes each)...")
	env, err := testenv.Start(ctx, testenv.Options{Clusters: demoClusters, BinDir: filepath.Join(root, "bin")})
	if err != nil {
		return err
	}
	defer env.Stop()
	for _, c := range env.Clusters() {
		say("  %-16s %s at %s", c.Name(), c.Version(), c.URL())
	}
	repoDir, keyFile, err := prepareRepo(filepath.Join(root, "examples", "fleet-infra"), work, env)
	if err != nil {
		return err
	}
	kubeconfigs, err := writeKubeconfigs(work, env)
	if err != nil {
		return err
	}
	return runRegatta(ctx, filepath.Join(root, "bin", "regatta"), repoDir, keyFile, kubeconfigs, env)
}

// runRegatta runs the daemon until ctx ends, shows the dashboard once the
// first pass is done, then tells the user what to try.
func runRegatta(ctx context.Context, bin, repoDir, keyFile, kubeconfigs string, env *testenv.Env) error {
	logFile := filepath.Join(filepath.Dir(repoDir), "regatta.log")
	log, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, bin, "run", "--repo", repoDir, "--sops-age-key-file", keyFile,
		"--interval", "10s", "--drift-interval", "1m", "--health-timeout", "1m", "--metrics-addr", "127.0.0.1:8080",
		"--ui-addr", "127.0.0.1:8081")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 40 * time.Second
	if err := cmd.Start(); err != nil {
		return err
	}
	say("regatta run is following %s (log: %s)", repoDir, logFile)
	if waitForStatus(ctx, bin, repoDir) {
		showWorkloads(ctx, env)
		show(ctx, bin, repoDir)
		showEvent(ctx, env)
		instructions(repoDir, kubeconfigs, logFile)
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		say("demo stopped; clusters removed.")
		return nil
	}
	return fmt.Errorf("regatta run exited: %v (see %s)", err, logFile)
}

// waitForStatus waits until regatta committed status for the first time.
func waitForStatus(ctx context.Context, bin, repoDir string) bool {
	for {
		if exec.Command("git", "-C", repoDir, "rev-parse", "--verify", "-q", "regatta/status").Run() == nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
}

// show prints the dashboard once the committed status has caught up with
// the clusters (no profile Progressing), or after a minute as it is.
func show(ctx context.Context, bin, repoDir string) {
	var out []byte
	for deadline := time.Now().Add(time.Minute); ; {
		out, _ = exec.Command(bin, "status", repoDir).CombinedOutput()
		if !strings.Contains(string(out), " Progressing ") || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
	os.Stdout.Write(out)
}

func instructions(repoDir, kubeconfigs, logFile string) {
	say(`
The fleet is rolled out, on Pods that the clusters' own controllers made.
Open the web UI at http://127.0.0.1:8081/ (it follows what happens live). Try:

  cd %[1]s
  export KUBECONFIG=%[2]s/staging-1.yaml        # or production-eu-1.yaml, production-us-1.yaml
  ../../bin/kubectl -n apps get deployments,replicasets,pods -o wide

  sed -i 's/"500"/"750"/' infrastructure/overlays/production/kustomization.yaml
  git commit -qam "raise production connections" && sleep 5
  ../../bin/regatta status .                      # the dashboard, from the status branch
  git show regatta/status:status/README.md        # the same, as a Git host shows it
  ../../bin/regatta render --cluster staging-1 .  # what regatta applies there
  curl -s 127.0.0.1:8080/metrics | grep ^regatta_

A broken release halts the progressive rollout at staging (profiles/apps.yaml):

  sed -i 's|ghcr.io/stefanprodan/podinfo:6.7.1|registry.test/crash:6.7.2|' apps/base/deployment.yaml
  git commit -qam "podinfo 6.7.2"
  ../../bin/kubectl -n apps get pods -w           # staging-1's new ReplicaSet crash-loops; its old Pods keep serving
  ../../bin/regatta status .                      # after the 1m health timeout: staging-1 Failed, rollout halted;
                                                  # production still runs 6.7.1 and was never written
                                                  # (the UI: http://127.0.0.1:8081/profiles/apps)
  git revert --no-edit HEAD                       # staging recovers; production rolls on after the soak

regatta's log: %[3]s
Press Ctrl-C to stop the demo (regatta, the clusters and their data go away).`, repoDir, kubeconfigs, logFile)
}

func say(format string, args ...any) { fmt.Printf(format+"\n", args...) }
