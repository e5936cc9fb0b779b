package helm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/regatta-dev/regatta/render/sandbox"
)

// TestMain lets this test binary serve as the chart render worker.
func TestMain(m *testing.M) {
	if os.Getenv(WorkerEnv) != "" {
		if err := ServeWorker(os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testWorker runs workers from this test binary, or from the regatta
// binary named by $REGATTA_HELM_BENCH_WORKER (to measure its cost).
func testWorker(t testing.TB) *WorkerOptions {
	t.Helper()
	if bin := os.Getenv("REGATTA_HELM_BENCH_WORKER"); bin != "" {
		return &WorkerOptions{Command: []string{bin, "__helm-render"}}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &WorkerOptions{Command: []string{exe}, Env: []string{WorkerEnv + "=1"}}
}

// bombChart is a chart folder whose templates/bomb.yaml holds body in a
// YAML comment on line 3.
func bombChart(t *testing.T, body string) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	chartFolder(t, m, "cache", "addons/app")
	m["addons/app/templates/bomb.yaml"] = &fstest.MapFile{Data: []byte("# a bomb\n\n# " + body + "\n")}
	return m
}

// TestDataDrivenBombsStop: loops and sizes computed from values pass no
// scan; the worker is stopped at a limit and the error names the template
// and line that computes them. The renderer keeps working afterwards.
func TestDataDrivenBombsStop(t *testing.T) {
	for name, tc := range map[string]struct {
		body, want string
		values     map[string]any
	}{
		"range until": {"{{ range (until (int .Values.n)) }}{{ end }}", "(stopped)", map[string]any{"n": 2e9}},
		"range int":   {"{{ range (int .Values.n) }}{{ end }}", "longer than", map[string]any{"n": 1e14}},
		"repeat":      {`{{ repeat (int .Values.n) "x" }}`, "memory", map[string]any{"n": 4e9}},
		"len until":   {"{{ len (until (int .Values.n)) }}", "(stopped)", map[string]any{"n": 2e9}},
	} {
		t.Run(name, func(t *testing.T) {
			timeout := 2 * time.Second
			if tc.want == "memory" {
				timeout = time.Minute // only the memory bound stops it
			}
			r := New(Options{CacheDir: t.TempDir(), Worker: withLimits(testWorker(t), timeout, 256<<20)})
			defer r.Close()
			req := Request{
				ChartFS:          bombChart(t, tc.body),
				ChartPath:        "addons/app",
				ReleaseName:      "app",
				ReleaseNamespace: "ns",
				Values:           tc.values,
			}
			start := time.Now()
			_, err := r.Render(context.Background(), req)
			var te *TemplateError
			if !errors.Is(err, ErrTemplateLimit) || !errors.As(err, &te) || te.File != "templates/bomb.yaml" || te.Line != 3 {
				t.Fatalf("err = %v, want ErrTemplateLimit at templates/bomb.yaml:3", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
			req.Values = map[string]any{"n": 3}
			if _, err := r.Render(context.Background(), req); err != nil {
				t.Errorf("a small n after the bomb: %v", err)
			}
		})
	}
}

func withLimits(o *WorkerOptions, timeout time.Duration, mem int64) *WorkerOptions {
	o.Timeout, o.MaxMemory = timeout, mem
	return o
}

// TestWorkerOutputLimit: rendered files past MaxOutput stop the render.
func TestWorkerOutputLimit(t *testing.T) {
	o := testWorker(t)
	o.MaxOutput, o.Timeout = 1<<20, 20*time.Second
	r := New(Options{CacheDir: t.TempDir(), Worker: o})
	defer r.Close()
	body := "{{ range (until (int .Values.n)) }}# {{ repeat 1000 \"x\" }}\n{{ end }}"
	req := Request{
		ChartFS:     bombChart(t, body),
		ChartPath:   "addons/app",
		ReleaseName: "app",
		Values:      map[string]any{"n": 1200},
	}
	_, err := r.Render(context.Background(), req)
	var te *TemplateError
	if !errors.Is(err, ErrTemplateLimit) || !strings.Contains(err.Error(), "pass 1 MiB") || !errors.As(err, &te) || te.File != "templates/bomb.yaml" {
		t.Fatalf("err = %v, want the output limit", err)
	}
}

// TestWorkerKeepsErrors: template errors come back from the worker with
// their file and line, and a cancelled caller gets its context error.
func TestWorkerKeepsErrors(t *testing.T) {
	r := newTestRenderer(t)
	req := Request{ChartFS: bombChart(t, `{{ fail "no" }}`), ChartPath: "addons/app", ReleaseName: "app"}
	_, err := r.Render(context.Background(), req)
	var te *TemplateError
	if !errors.As(err, &te) || te.File != "templates/bomb.yaml" || te.Line != 3 || errors.Is(err, ErrTemplateLimit) {
		t.Errorf("err = %v, want a TemplateError at templates/bomb.yaml:3", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req.ChartFS = bombChart(t, "{{ range (int .Values.n) }}{{ end }}")
	req.Values = map[string]any{"n": 1e14}
	if _, err := r.Render(ctx, req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestKilledIdleWorkerIsReplaced: a worker that ends while idle (the
// OOM killer, an operator) is not handed out again.
func TestKilledIdleWorkerIsReplaced(t *testing.T) {
	r := newTestRenderer(t)
	req := Request{ChartFS: bombChart(t, "ok"), ChartPath: "addons/app", ReleaseName: "app"}
	if _, err := r.Render(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	for _, w := range idleWorkers(r) {
		_ = syscall.Kill(w.Pid, syscall.SIGKILL)
		<-w.Exited
	}
	if _, err := r.Render(context.Background(), req); err != nil {
		t.Errorf("after the idle workers were killed: %v", err)
	}
}

// rendererIdleAfter is a test renderer whose workers end after idle.
func rendererIdleAfter(t *testing.T, idle time.Duration) *Renderer {
	t.Helper()
	wo := testWorker(t)
	wo.IdleTimeout = idle
	r := New(Options{CacheDir: t.TempDir(), RegistryConfig: filepath.Join(t.TempDir(), "none.json"), Worker: wo})
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// idleWorkers returns the workers a renderer keeps for the next render.
func idleWorkers(r *Renderer) []sandbox.Process {
	return r.workers.pool.Idle()
}

// TestIdleWorkerEnds: a worker that renders nothing for IdleTimeout ends
// (its process exits), and the next render starts a new one.
func TestIdleWorkerEnds(t *testing.T) {
	r := rendererIdleAfter(t, 200*time.Millisecond)
	req := Request{ChartFS: bombChart(t, "ok"), ChartPath: "addons/app", ReleaseName: "app"}
	if _, err := r.Render(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	idle := idleWorkers(r)
	if len(idle) != 1 {
		t.Fatalf("%d idle workers after one render, want 1", len(idle))
	}
	select {
	case <-idle[0].Exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the idle worker still runs 10s after its 200ms idle timeout")
	}
	if n := len(idleWorkers(r)); n != 0 {
		t.Errorf("%d idle workers kept after the timeout", n)
	}
	req.ReleaseName = "again" // not a cache hit
	if _, err := r.Render(context.Background(), req); err != nil {
		t.Errorf("render after the idle worker ended: %v", err)
	}
}

// TestBusyWorkerIsKept: a worker that renders again within IdleTimeout is
// the same process, so renders between commits pay no start.
func TestBusyWorkerIsKept(t *testing.T) {
	r := rendererIdleAfter(t, time.Hour)
	pids := map[int]bool{}
	for i := range 3 {
		req := Request{ChartFS: bombChart(t, "ok"), ChartPath: "addons/app", ReleaseName: fmt.Sprintf("app%d", i)}
		if _, err := r.Render(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		for _, w := range idleWorkers(r) {
			pids[w.Pid] = true
		}
	}
	if len(pids) != 1 {
		t.Errorf("3 renders one after another used %d worker processes, want 1", len(pids))
	}
}

// TestWorkerThatCannotStart: a worker command that does not serve fails
// the render with the command's name, not a hang.
func TestWorkerThatCannotStart(t *testing.T) {
	r := New(Options{CacheDir: t.TempDir(), Worker: &WorkerOptions{Command: []string{"/bin/sh", "-c", "echo no such worker >&2"}}})
	defer r.Close()
	req := Request{ChartFS: bombChart(t, "ok"), ChartPath: "addons/app", ReleaseName: "app"}
	_, err := r.Render(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "helm worker /bin/sh") || !strings.Contains(err.Error(), "no such worker") {
		t.Errorf("err = %v", err)
	}
}

// TestScanChartFolder: regatta validate's check finds a literal bomb in a
// subchart of a chart folder, and passes a clean chart.
func TestScanChartFolder(t *testing.T) {
	m := bombChart(t, "{{ range 100000000000000 }}{{ end }}")
	m["addons/clean/Chart.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v2\nname: clean\nversion: 0.1.0\n")}
	m["addons/app/charts/sub/Chart.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v2\nname: sub\nversion: 0.1.0\n")}
	m["addons/app/charts/sub/templates/x.yaml"] = &fstest.MapFile{Data: []byte(`{{ repeat 4000000000 "x" }}`)}
	delete(m, "addons/app/templates/bomb.yaml")
	var te *TemplateError
	if err := ScanChartFolder(m, "addons/app"); !errors.As(err, &te) || te.File != "charts/sub/templates/x.yaml" || te.Line != 1 {
		t.Errorf("bomb: %v", err)
	}
	if err := ScanChartFolder(m, "addons/clean"); err != nil {
		t.Errorf("clean: %v", err)
	}
}

// TestStoppedRenderLocation: with no data-driven loop, a tpl call is the
// likely cause; with neither, the error names the chart's Chart.yaml.
func TestStoppedRenderLocation(t *testing.T) {
	for name, tc := range map[string]struct {
		body, values, file string
		line               int
	}{
		"tpl": {"{{ tpl .Values.t . }}", `{{ range 100000000000000 }}{{ end }}`, "templates/bomb.yaml", 3},
		"nested ranges over values": {"{{ range .Values.l }}{{ range $.Values.l }}{{ range $.Values.l }}{{ range $.Values.l }}{{ end }}{{ end }}{{ end }}{{ end }}",
			"", "Chart.yaml", 0},
	} {
		r := New(Options{CacheDir: t.TempDir(), Worker: withLimits(testWorker(t), time.Second, 256<<20)})
		defer r.Close()
		req := Request{
			ChartFS:     bombChart(t, tc.body),
			ChartPath:   "addons/app",
			ReleaseName: "app",
			Values:      map[string]any{"t": tc.values, "l": make([]any, 1000)},
		}
		_, err := r.Render(context.Background(), req)
		var te *TemplateError
		if !errors.Is(err, ErrTemplateLimit) || !errors.As(err, &te) || te.File != tc.file || te.Line != tc.line {
			t.Errorf("%s: err = %v, want ErrTemplateLimit at %s:%d", name, err, tc.file, tc.line)
		}
	}
}

// TestWorkerKilledFromOutside: a worker that the kernel's OOM killer (here:
// this test) ends in the middle of a render fails that render as a limit.
func TestWorkerKilledFromOutside(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	o := &WorkerOptions{
		Command:   []string{"/bin/sh", "-c", `echo $$ > "$0"; exec "$1"`, pidFile, exe},
		Env:       []string{WorkerEnv + "=1"},
		Timeout:   time.Minute,
		MaxMemory: 2 << 30,
	}
	r := New(Options{CacheDir: t.TempDir(), Worker: o})
	defer r.Close()
	go func() {
		for {
			if data, err := os.ReadFile(pidFile); err == nil && len(data) > 0 {
				// Kill it once the render has begun to allocate.
				pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
				if rss, ok := sandbox.ResidentMemory(pid); err == nil && ok && rss > 150<<20 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	req := Request{
		ChartFS:     bombChart(t, "{{ range (until (int .Values.n)) }}{{ end }}"),
		ChartPath:   "addons/app",
		ReleaseName: "app",
		Values:      map[string]any{"n": 5e7},
	}
	_, err = r.Render(context.Background(), req)
	if !errors.Is(err, ErrTemplateLimit) || !strings.Contains(err.Error(), "ran out of memory") {
		t.Errorf("err = %v, want a limit error", err)
	}
}

// TestWorkerEnvironment: a worker inherits no credentials from regatta's
// environment.
func TestWorkerEnvironment(t *testing.T) {
	t.Setenv("REGATTA_WEBHOOK_SECRET", "s3cret")
	t.Setenv("PATH", "/usr/bin:/bin")
	for _, kv := range sandbox.Environ() {
		if strings.Contains(kv, "s3cret") {
			t.Errorf("worker environment holds %s", kv)
		}
	}
	if !slices.Contains(sandbox.Environ(), "PATH=/usr/bin:/bin") {
		t.Errorf("PATH missing: %v", sandbox.Environ())
	}
}

// TestWorkerKeepsBytes: rendered bytes that are not UTF-8 reach the YAML
// decoder as they are, as in process (JSON strings would replace them).
func TestWorkerKeepsBytes(t *testing.T) {
	m := bombChart(t, "x")
	m["addons/app/templates/bytes.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {v: \"\xff\"}\n")}
	req := Request{ChartFS: m, ChartPath: "addons/app", ReleaseName: "app"}
	_, inProcess := New(Options{CacheDir: t.TempDir()}).Render(context.Background(), req)
	_, worker := newTestRenderer(t).Render(context.Background(), req)
	if inProcess == nil || worker == nil || inProcess.Error() != worker.Error() {
		t.Errorf("in process: %v\nin a worker: %v", inProcess, worker)
	}
}
