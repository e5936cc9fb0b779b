package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"filippo.io/age"
	"golang.org/x/sys/unix"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/render/sops"
)

// IdleOptions configures RunIdle: the memory of an idle `regatta run` on
// a fleet whose clusters cannot be reached (issue 30's RSS budget).
type IdleOptions struct {
	// Bins are the regatta binaries to compare, by label; each round runs
	// them one after the other in this order.
	Bins []IdleBin
	// Clusters and Profiles size the fleet.
	Clusters int
	Profiles int
	Rounds   int
	// Wait is how long each daemon runs before it is read.
	Wait time.Duration
	// Cold drops each binary's pages from the page cache before it starts
	// (as a fresh node or container would read it), so that every binary
	// starts alike rather than with whatever an earlier build or run left.
	Cold bool
	Dir  string
	Logf func(format string, args ...any)
}

// IdleBin is one binary RunIdle measures.
type IdleBin struct {
	Label string
	Path  string
}

// IdleSample is one daemon's memory after IdleOptions.Wait, in bytes.
type IdleSample struct {
	Label   string
	Round   int
	Status  map[string]int64 // VmRSS, RssAnon, RssFile, RssShmem
	Rollup  map[string]int64 // Pss, Pss_Anon, Pss_File from smaps_rollup
	BinSize int64
}

// idleStatusFields and idleRollupFields are what IdleSample keeps.
var (
	idleStatusFields = []string{"VmRSS", "RssAnon", "RssFile", "RssShmem"}
	idleRollupFields = []string{"Rss", "Pss", "Pss_Anon", "Pss_File", "Pss_Shmem"}
)

// RunIdle writes the fleet once and runs every binary on it for each
// round, one daemon at a time.
func RunIdle(ctx context.Context, o IdleOptions) ([]IdleSample, error) {
	repoDir, keyFile, err := writeIdleFleet(ctx, o)
	if err != nil {
		return nil, err
	}
	var out []IdleSample
	for r := range o.Rounds {
		for _, b := range o.Bins {
			s, err := idleOnce(ctx, o, b, repoDir, keyFile)
			if err != nil {
				return out, fmt.Errorf("%s, round %d: %w", b.Label, r+1, err)
			}
			s.Round = r + 1
			o.Logf("idle: round %d %-8s VmRSS %s, anon %s, file %s, Pss %s",
				s.Round, b.Label, mib(s.Status["VmRSS"]), mib(s.Status["RssAnon"]),
				mib(s.Status["RssFile"]+s.Status["RssShmem"]), mib(s.Rollup["Pss"]))
			out = append(out, s)
		}
	}
	return out, nil
}

// idleOnce starts one daemon, waits, reads its memory and stops it.
func idleOnce(ctx context.Context, o IdleOptions, b IdleBin, repoDir, keyFile string) (IdleSample, error) {
	s := IdleSample{Label: b.Label}
	if fi, err := os.Stat(b.Path); err == nil {
		s.BinSize = fi.Size()
	}
	if o.Cold {
		if err := dropPageCache(b.Path); err != nil {
			return s, err
		}
	}
	logFile, err := os.Create(filepath.Join(o.Dir, b.Label+".log"))
	if err != nil {
		return s, err
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, b.Path, "run", "--repo", repoDir, "--sops-age-key-file", keyFile,
		"--status-branch", "", "--metrics-addr", "127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), "HOME="+o.Dir)
	if err := cmd.Start(); err != nil {
		return s, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	select {
	case <-ctx.Done():
		return s, ctx.Err()
	case <-time.After(o.Wait):
	}
	pid := cmd.Process.Pid
	if s.Status, err = procStatusFields(fmt.Sprintf("/proc/%d/status", pid), idleStatusFields...); err != nil {
		return s, err
	}
	if kids, n, _ := ChildrenRSS(pid); n > 0 {
		return s, fmt.Errorf("%d child processes hold %d MiB: not counted", n, kids>>20)
	}
	if s.Rollup, err = procStatusFields(fmt.Sprintf("/proc/%d/smaps_rollup", pid), idleRollupFields...); err != nil {
		return s, err
	}
	if s.Rollup["Pss"] < s.Rollup["Rss"]*95/100 {
		return s, fmt.Errorf("Pss %d MiB < Rss %d MiB: another process maps the same pages (%s running elsewhere?)",
			s.Rollup["Pss"]>>20, s.Rollup["Rss"]>>20, b.Path)
	}
	return s, nil
}

// dropPageCache asks the kernel to drop a file's cached pages; pages
// mapped by a running process stay.
func dropPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("%s: dropping its cached pages: %w", path, err)
	}
	return nil
}

// writeIdleFleet writes a local Git repository: Clusters clusters whose
// age-encrypted kubeconfig Secrets point at a closed port, Profiles plain
// profiles of 30 objects and one age-encrypted Secret each.
func writeIdleFleet(ctx context.Context, o IdleOptions) (repoDir, keyFile string, err error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return "", "", err
	}
	keyFile = filepath.Join(o.Dir, "age.key")
	if err := os.WriteFile(keyFile, []byte(id.String()+"\n"), 0o600); err != nil {
		return "", "", err
	}
	files, err := idleFleetFiles(o, id.Recipient().String())
	if err != nil {
		return "", "", err
	}
	repoDir = filepath.Join(o.Dir, "fleet")
	if err := os.RemoveAll(repoDir); err != nil {
		return "", "", err
	}
	if err := WriteTree(repoDir, files); err != nil {
		return "", "", err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "fleet"}} {
		if _, err := runGit(ctx, repoDir, args...); err != nil {
			return "", "", err
		}
	}
	return repoDir, keyFile, nil
}

// idleFleetFiles is the fleet of writeIdleFleet, encrypted to recipient.
func idleFleetFiles(o IdleOptions, recipient string) (map[string]string, error) {
	port, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	f := Fleet{Style: StyleTemplateLabel, Prefix: "idle", Clusters: NewClusters(o.Clusters), Profiles: o.Profiles}
	for i := range f.Clusters {
		f.Clusters[i].Kubeconfig = closedKubeconfig(f.Clusters[i].Name, port)
	}
	files := f.Files()
	for i := range f.Profiles {
		p := ProfileName(i)
		files["manifests/"+p+"/zz-secret.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: sealed\n  namespace: %s\ntype: Opaque\nstringData:\n  password: idle-%s\n", f.Namespace(p), p)
	}
	for name, data := range files {
		if !strings.HasSuffix(name, "/kubeconfig.yaml") && !strings.HasSuffix(name, "/zz-secret.yaml") {
			continue
		}
		enc, err := sops.Encrypt(name, []byte(data), sops.SecretRegex, []string{recipient})
		if err != nil {
			return nil, err
		}
		files[name] = string(enc)
	}
	return files, nil
}

// closedKubeconfig points at a loopback port nothing listens on.
func closedKubeconfig(name string, port int) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster: {server: "https://127.0.0.1:%[2]d", insecure-skip-tls-verify: true}
users:
- name: %[1]s
  user: {token: idle-token}
contexts:
- name: %[1]s
  context: {cluster: %[1]s, user: %[1]s}
current-context: %[1]s
`, name, port)
}
