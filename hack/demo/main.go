// Command demo runs regatta's main job on this machine: three local
// clusters at different Kubernetes versions, the example fleet repository
// as a local Git repository whose SOPS-encrypted kubeconfig Secrets point at
// them, and `regatta run` following it. `make demo` runs it.
//
// The clusters are real kube-apiservers without nodes or controllers, so
// this program also plays the part of their controllers for Deployments:
// it marks them available, as a kubelet and the deployment controller
// would. Stop it with Ctrl-C; it removes the clusters it started.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// demoClusters are the example's clusters and the versions they run.
var demoClusters = []testenv.ClusterOptions{
	{Name: "staging-1", Version: "v1.36.3"},
	{Name: "production-eu-1", Version: "v1.37.2"},
	{Name: "production-us-1", Version: "v1.35.4"},
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
	say("starting 3 local clusters (kube-apiserver + etcd)...")
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
	go markDeploymentsAvailable(ctx, env)
	return runRegatta(ctx, filepath.Join(root, "bin", "regatta"), repoDir, keyFile, env)
}

// runRegatta runs the daemon until ctx ends, shows the dashboard once the
// first pass is done, then tells the user what to try.
func runRegatta(ctx context.Context, bin, repoDir, keyFile string, env *testenv.Env) error {
	logFile := filepath.Join(filepath.Dir(repoDir), "regatta.log")
	log, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, bin, "run", "--repo", repoDir, "--sops-age-key-file", keyFile,
		"--interval", "10s", "--drift-interval", "1m", "--health-timeout", "1m", "--metrics-addr", "127.0.0.1:8080")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 40 * time.Second
	if err := cmd.Start(); err != nil {
		return err
	}
	say("regatta run is following %s (log: %s)", repoDir, logFile)
	if waitForStatus(ctx, bin, repoDir) {
		show(bin, repoDir)
		showEvent(ctx, env)
		instructions(repoDir, logFile)
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

func show(bin, repoDir string) {
	cmd := exec.Command(bin, "status", repoDir)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Run()
}

func instructions(repoDir, logFile string) {
	say(`
The fleet is rolled out. Try:

  cd %[1]s
  sed -i 's/"500"/"750"/' infrastructure/overlays/production/kustomization.yaml
  git commit -qam "raise production connections" && sleep 5
  ../../bin/regatta status .                      # the dashboard, from the status branch
  git show regatta/status:status/README.md        # the same, as a Git host shows it
  ../../bin/regatta render --cluster staging-1 .  # what regatta applies there
  curl -s 127.0.0.1:8080/metrics | grep ^regatta_

regatta's log: %[2]s
Press Ctrl-C to stop the demo (regatta, the clusters and their data go away).`, repoDir, logFile)
}

func say(format string, args ...any) { fmt.Printf(format+"\n", args...) }
