package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// RunPlanCmd times `regatta plan` over a generated fleet of n clusters × 20
// profiles in a local Git repository, between a base commit and a head
// commit. For StyleMixed the head changes one ConfigMap in the Kustomize
// base of one profile (every cluster is affected); for the other styles it
// makes Fleet.Change (one overlay: a third of the clusters; or one plain
// profile's ConfigMap: every cluster).
func RunPlanCmd(ctx context.Context, regatta string, n int, style string, chart *ChartRepo, dir string) (*PlanCmdResult, error) {
	f := Fleet{Style: style, Prefix: "pl", Clusters: NewClusters(n), Profiles: 20, ChartRepo: chart.URL()}
	work := filepath.Join(dir, "repo-"+style)
	files := f.Files()
	if err := os.RemoveAll(work); err != nil {
		return nil, err
	}
	if err := commitLocal(ctx, work, "base", files); err != nil {
		return nil, err
	}
	p, change := f.Change(files)
	if style == StyleMixed || style == "" {
		p = ProfileName(kustomizeProfiles(f.Profiles)[0])
		objs := "kustomize/" + p + "/base/objects.yaml"
		change = map[string]string{objs: strings.Replace(files[objs], "value 00.0 ", "value 00.0 (changed) ", 1)}
	}
	if err := commitLocal(ctx, work, "change "+p, change); err != nil {
		return nil, err
	}
	args := []string{"plan", "--base", "HEAD~1", "--head", "HEAD", "--status-branch", "", "--output", "json",
		"--helm-cache-dir", filepath.Join(dir, "helm"), "--allow-url-prefix", chart.URL() + "/", work}
	res := &PlanCmdResult{Style: style, Clusters: n, Command: displayCommand("regatta", args),
		Note: fmt.Sprintf("Fleet style %s; head changes %s of %s (20 profiles, %d clusters); output in internal/bench/raw/scale/plan-%s.json.",
			style, strings.Join(keys(change), ", "), p, n, style)}
	out, err := os.Create(filepath.Join(dir, "plan-"+style+".json"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.CommandContext(ctx, regatta, args...)
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err = cmd.Run()
	res.Secs = time.Since(start).Seconds()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		err = nil // 2: something changes, as expected
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.PeakRSS = ru.Maxrss << 10
	}
	if err != nil {
		return res, fmt.Errorf("regatta plan: %w (see %s)", err, out.Name())
	}
	return res, nil
}

// commitLocal writes files in a local repository (created when missing) and
// commits them.
func commitLocal(ctx context.Context, work, msg string, files map[string]string) error {
	if _, err := os.Stat(filepath.Join(work, ".git")); err != nil {
		if err := os.MkdirAll(work, 0o755); err != nil {
			return err
		}
		if _, err := runGit(ctx, work, "init", "-q", "-b", "main"); err != nil {
			return err
		}
	}
	if err := WriteTree(work, files); err != nil {
		return err
	}
	if _, err := runGit(ctx, work, "add", "-A"); err != nil {
		return err
	}
	_, err := runGit(ctx, work, "commit", "-q", "-m", msg)
	return err
}

// displayCommand formats a command line for the report: empty arguments
// quoted, paths relative to the working directory.
func displayCommand(name string, args []string) string {
	wd, _ := os.Getwd()
	parts := []string{name}
	for _, a := range args {
		switch {
		case a == "":
			a = `""`
		case wd != "" && strings.HasPrefix(a, wd+"/"):
			a = strings.TrimPrefix(a, wd+"/")
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
