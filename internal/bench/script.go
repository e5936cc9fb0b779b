package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Script is the way people roll a fleet out today: one shell command per
// (cluster, profile), `kubectl apply --server-side` of a Kustomize overlay
// or a folder, and for Helm a render (`regatta render`, standing in for
// `helm template` with the same values) piped to kubectl.
type Script struct {
	Dir     string // the fleet's working tree
	Kubectl string
	Regatta string
	// HelmCacheDir is where `regatta render` caches the chart.
	HelmCacheDir string
	Kubeconfigs  map[string]string
	Fleet        Fleet
}

// Commands returns one shell command per (cluster, profile).
func (s Script) Commands() []string {
	var out []string
	for _, c := range s.Fleet.Clusters {
		kc := s.Kubeconfigs[c.Name]
		apply := fmt.Sprintf("%s --kubeconfig %s apply --server-side --field-manager=script", s.Kubectl, kc)
		for i := range s.Fleet.Profiles {
			name := ProfileName(i)
			switch ProfileKind(i) {
			case KindPlain:
				out = append(out, fmt.Sprintf("%s -f %s", apply, filepath.Join(s.Dir, "manifests", name)))
			case KindKustomize:
				out = append(out, fmt.Sprintf("%s -k %s", apply, filepath.Join(s.Dir, OverlayDir(name, c.Variant))))
			case KindHelm:
				out = append(out, fmt.Sprintf("%s render --cluster %s --profile %s --helm-cache-dir %s --allow-url-prefix %s/ %s | %s -f -",
					s.Regatta, c.Name, name, s.HelmCacheDir, s.Fleet.ChartRepo, s.Dir, apply))
			}
		}
	}
	return out
}

// Run writes each command to its own script and runs them all with
// `xargs -P parallel`, and returns the wall time. Output goes to logPath.
func (s Script) Run(ctx context.Context, parallel int, logPath string) (time.Duration, error) {
	cmdDir := filepath.Join(s.Dir, ".commands")
	if err := os.MkdirAll(cmdDir, 0o755); err != nil {
		return 0, err
	}
	var list strings.Builder
	for i, c := range s.Commands() {
		p := filepath.Join(cmdDir, fmt.Sprintf("%04d.sh", i))
		if err := os.WriteFile(p, []byte("set -euo pipefail\n"+c+"\n"), 0o644); err != nil {
			return 0, err
		}
		list.WriteString(p + "\n")
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, "xargs", "-P", fmt.Sprint(parallel), "-n", "1", "bash")
	cmd.Stdin = strings.NewReader(list.String())
	cmd.Stdout, cmd.Stderr = logf, logf
	// A fresh HOME: kubectl's discovery cache starts cold, as on a CI runner.
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(s.Dir, ".home"))
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if err != nil {
		return took, fmt.Errorf("xargs -P %d: %w (see %s)", parallel, err, logPath)
	}
	return took, nil
}
