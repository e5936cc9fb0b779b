package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Child is `regatta run` in a child process, with its metrics endpoint.
type Child struct {
	cmd     *exec.Cmd
	metrics string
	pprof   string
	done    chan struct{}
	logPath string
}

// ChildOptions configures StartChild.
type ChildOptions struct {
	Regatta       string
	RepoURL       string
	DriftInterval time.Duration
	Dir           string // scratch folder: password file, Helm cache, log
	// ChartRepo is the loopback chart repository the fleet uses, allowed
	// through regatta's URL policy.
	ChartRepo string
	// Args are more flags of `regatta run`.
	Args []string
}

// StartChild starts `regatta run` following the loopback repository.
func StartChild(o ChildOptions) (*Child, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	pprofAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	pw := o.Dir + "/git-password"
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(pw, []byte(GitPassword), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(o.Regatta, "run", "--repo", o.RepoURL, "--git-username", GitUser, "--git-password-file", pw,
		"--drift-interval", o.DriftInterval.String(), "--metrics-addr", addr, "--pprof-addr", pprofAddr, "--helm-cache-dir", o.Dir+"/helm")
	if o.ChartRepo != "" {
		cmd.Args = append(cmd.Args, "--allow-url-prefix", o.ChartRepo+"/")
	}
	cmd.Args = append(cmd.Args, o.Args...)
	c, err := startCommand(cmd, o.Dir+"/regatta.log")
	if err != nil {
		return nil, err
	}
	c.metrics, c.pprof = "http://"+addr+"/metrics", "http://"+pprofAddr+"/debug/pprof/"
	return c, nil
}

// startCommand starts cmd in a process group of its own (Stop and Kill end
// the group; it dies with the bench), its output in logPath.
func startCommand(cmd *exec.Cmd, logPath string) (*Child, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	c := &Child{cmd: cmd, done: make(chan struct{}), logPath: logPath}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { cmd.Wait(); logf.Close(); close(c.done) }()
	return c, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Pid is the child's process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Stop sends SIGTERM and waits (SIGKILL after 30 s).
func (c *Child) Stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-c.Pid(), syscall.SIGKILL)
		<-c.done
	}
}

// Kill sends SIGKILL and waits for the process to end.
func (c *Child) Kill() {
	_ = syscall.Kill(-c.Pid(), syscall.SIGKILL)
	<-c.done
}

// SaveProfile writes one of the child's Go profiles (heap, goroutine, ...)
// to path.
func (c *Child) SaveProfile(ctx context.Context, name, path string) error {
	if err := download(ctx, http.DefaultClient, c.pprof+name, path); err != nil {
		return fmt.Errorf("profile %s: %w", name, err)
	}
	return nil
}

// download writes the body of a GET of url to path.
func download(ctx context.Context, client *http.Client, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Metrics returns the child's metric samples by series (name{labels}).
func (c *Child) Metrics(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.metrics, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseSamples(resp.Body)
}

func parseSamples(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// Passes returns the child's converged and total passes.
func (c *Child) Passes(ctx context.Context) (converged, total float64, err error) {
	m, err := c.Metrics(ctx)
	if err != nil {
		return 0, 0, err
	}
	for k, v := range m {
		if strings.HasPrefix(k, "regatta_passes_total{") {
			total += v
			if strings.Contains(k, `result="converged"`) {
				converged += v
			}
		}
	}
	return converged, total, nil
}

// WaitPasses waits until the child has finished at least n passes, of
// which at least conv converged, polling its metrics every poll. Each poll
// is a scrape the child serves; waits inside a CPU or memory reading poll
// at a scrape rate a real Prometheus might use, not every 100 ms (serving
// ten scrapes a second was two thirds of an idle daemon's CPU).
func (c *Child) WaitPasses(ctx context.Context, n, conv float64, within, poll time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		cv, total, err := c.Passes(ctx)
		if err == nil && total >= n && cv >= conv {
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("regatta run exited (see %s)", c.logPath)
		case <-ctx.Done():
			return fmt.Errorf("waiting for %v passes (%v converged): %v (%v converged) seen (see %s)", n, conv, total, cv, c.logPath)
		case <-time.After(poll):
		}
	}
}

// ProcStatus returns VmRSS and VmHWM of a process in bytes.
func ProcStatus(pid int) (rss, hwm int64, err error) {
	return procStatus(fmt.Sprintf("/proc/%d/status", pid))
}

// ChildrenRSS sums the resident memory of a process's child processes
// (regatta's chart render workers) and counts them. A child belongs to the
// thread that started it, so every thread's list is read.
func ChildrenRSS(pid int) (rss int64, n int, err error) {
	lists, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil || len(lists) == 0 {
		return 0, 0, fmt.Errorf("children of %d: no task lists (%v)", pid, err)
	}
	var kids []string
	for _, l := range lists {
		if b, err := os.ReadFile(l); err == nil {
			kids = append(kids, strings.Fields(string(b))...)
		}
	}
	for _, f := range kids {
		cpid, _ := strconv.Atoi(f)
		r, _, err := ProcStatus(cpid)
		if err != nil {
			continue // ended meanwhile
		}
		rss += r
		n++
	}
	return rss, n, nil
}

func procStatus(path string) (rss, hwm int64, err error) {
	f, err := procStatusFields(path, "VmRSS", "VmHWM")
	return f["VmRSS"], f["VmHWM"], err
}

// ProcCPU returns the CPU time (user and system) a process has used.
func ProcCPU(pid int) (time.Duration, error) {
	st, err := readProcStat(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return time.Duration(st.utime+st.stime) * time.Second / userHZ, nil
}

// ProcAnon returns the anonymous part of a process's resident memory
// (RssAnon: heap, stacks, data); the rest of VmRSS is file pages (RssFile,
// or RssShmem for a binary on tmpfs, as the suite runs it).
func ProcAnon(pid int) (int64, error) {
	f, err := procStatusFields(fmt.Sprintf("/proc/%d/status", pid), "RssAnon")
	return f["RssAnon"], err
}

// procStatusFields reads the named kB fields of a /proc status file, in
// bytes.
func procStatusFields(path string, names ...string) (map[string]int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for line := range strings.Lines(string(data)) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		if fs := strings.Fields(rest); len(fs) > 0 {
			kb, _ := strconv.ParseInt(fs[0], 10, 64)
			out[name] = kb << 10
		}
	}
	return out, nil
}
