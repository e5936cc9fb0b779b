package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

func gitEnv(home string) []string {
	return append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Dev", "GIT_AUTHOR_EMAIL=dev@example.com",
		"GIT_COMMITTER_NAME=Dev", "GIT_COMMITTER_EMAIL=dev@example.com")
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitOut(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, gitEnv(dir)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// repoDirs is a bare fleet repository and a working clone of it.
type repoDirs struct{ bare, work string }

func newRepo(t *testing.T) repoDirs {
	t.Helper()
	r := repoDirs{bare: filepath.Join(t.TempDir(), "fleet.git"), work: t.TempDir()}
	git(t, ".", "init", "-q", "--bare", "-b", "main", r.bare)
	git(t, r.work, "init", "-q", "-b", "main")
	git(t, r.work, "remote", "add", "origin", r.bare)
	return r
}

func (r repoDirs) commit(t *testing.T, msg string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(r.work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, r.work, "add", "-A")
	git(t, r.work, "commit", "-q", "-m", msg)
	git(t, r.work, "push", "-q", "origin", "HEAD:main")
	return git(t, r.work, "rev-parse", "HEAD")
}

// kubeconfigSecret stores a cluster's kubeconfig in the management
// cluster, where `regatta run` looks for <cluster>-kubeconfig.
func kubeconfigSecret(t *testing.T, mgmt kubernetes.Interface, c *testenv.Cluster) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "regatta-system"}}
	mgmt.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name() + "-kubeconfig", Namespace: "regatta-system"},
		Data:       map[string][]byte{"value": c.Kubeconfig()},
	}
	if _, err := mgmt.CoreV1().Secrets("regatta-system").Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// freePort returns a loopback port below the ephemeral range.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// process is a regatta child process.
type process struct {
	id      string
	metrics string
	cmd     *exec.Cmd
	log     *os.File
	done    chan struct{}
}

func startRegatta(t *testing.T, id, logDir string, args ...string) *process {
	t.Helper()
	port := freePort(t)
	log, err := os.OpenFile(filepath.Join(logDir, id+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644) // a restart appends
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string{"run", "--replica-identity", id, "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", port)}, args...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), execAsRegatta+"=1")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{id: id, metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", port), cmd: cmd, log: log, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill(syscall.SIGTERM); log.Close() })
	return p
}

// kill signals the process and waits for it to end.
func (p *process) kill(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// applies reads regatta_applies_total per cluster from the process.
func (p *process) applies() (map[string]float64, error) { return p.counter("regatta_applies_total") }

// counter reads a metric of the process, summed per cluster.
func (p *process) counter(name string) (map[string]float64, error) {
	resp, err := http.Get(p.metrics)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		_, rest, _ := strings.Cut(line, `cluster="`)
		cluster, _, _ := strings.Cut(rest, `"`)
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err == nil {
			out[cluster] += v
		}
	}
	return out, sc.Err()
}

// logDirOr is E2E_LOG_DIR, where the test's processes log, or dir.
func logDirOr(dir string) string {
	if d := os.Getenv("E2E_LOG_DIR"); d != "" {
		return d
	}
	return dir
}

// mgmtKubeconfig writes the management cluster's kubeconfig into dir and
// returns its path.
func mgmtKubeconfig(t *testing.T, dir string, mgmt *testenv.Cluster) string {
	t.Helper()
	path := filepath.Join(dir, "mgmt.kubeconfig")
	if err := os.WriteFile(path, mgmt.Kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
