package app

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/status"
)

func uiSnapshot(rev, state string) status.Snapshot {
	return status.Snapshot{
		Fleet: status.Fleet{SourceRevision: rev, AppliedRevision: rev},
		Clusters: []status.ClusterStatus{{Cluster: "prod-1", SourceRevision: rev, Reachable: true, Labels: map[string]string{"env": "prod"},
			Profiles: []status.Profile{{Name: "web", State: state, Revision: rev, Objects: 3}}}},
	}
}

// commitStatus commits snap's files onto the repository's status branch.
func commitStatus(t *testing.T, dir string, snap status.Snapshot) {
	t.Helper()
	git(t, dir, "checkout", "-q", DefaultStatusBranch)
	files, err := status.Files(snap)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "commit", "-qam", "status")
	git(t, dir, "checkout", "-q", "main")
}

// startUI runs `regatta ui` on loopback and returns its base URL and a
// channel that receives runUI's result once ctx ends.
func startUI(t *testing.T, ctx context.Context, f *uiFlags, dir string) (string, chan error) {
	t.Helper()
	addr := make(chan net.Addr, 1)
	f.listening = func(a net.Addr) { addr <- a }
	done := make(chan error, 1)
	go func() { done <- runUI(ctx, f, dir, io.Discard) }()
	select {
	case a := <-addr:
		return "http://" + a.String(), done
	case err := <-done:
		t.Fatalf("regatta ui did not start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("regatta ui did not listen within 30s")
	}
	return "", nil
}

func getPage(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", url, resp.StatusCode, b)
	}
	return string(b)
}

// `regatta ui` serves the status branch of a real repository, tells the
// live stream when a new status commit lands, and shuts down cleanly with
// a stream open.
func TestUICommandFollowsTheStatusBranch(t *testing.T) {
	rev1, rev2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	dir := statusRepo(t, uiSnapshot(rev1, status.StateApplied))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &uiFlags{addr: "127.0.0.1:0", statusBranch: DefaultStatusBranch, refresh: 50 * time.Millisecond, title: "acme", logFormat: "text", logLevel: "info"}
	base, done := startUI(t, ctx, f, dir)

	body := getPage(t, base+"/")
	for _, want := range []string{"<title>fleet · acme</title>", `<tr data-cluster="prod-1"`, `<td data-profile="web" data-state="Applied"`, `data-revision="` + rev1 + `"`} {
		if !strings.Contains(body, want) {
			t.Errorf("fleet page lacks %q", want)
		}
	}
	resp, err := http.Get(base + "/-/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	first := readMoved(t, r)

	commitStatus(t, dir, uiSnapshot(rev2, status.StateFailed))
	if next := readMoved(t, r); next == first {
		t.Fatalf("moved %q after a status commit, want a new version", next)
	}
	body = getPage(t, base+"/")
	if !strings.Contains(body, `<li data-cluster="prod-1" data-profile="web" data-state="Failed">`) || !strings.Contains(body, rev2) {
		t.Errorf("fleet page after the status commit lacks the failing pair at %s", rev2)
	}
	// the revisions page is the branch's history (ui/timeline): both
	// status commits, newest first, with prod-1's arrival at rev2; the
	// older commit's frame is the fleet at rev1
	body = getPage(t, base+"/revisions")
	commits := regexp.MustCompile(`<li data-commit="([0-9a-f]{40})" data-revision="([0-9a-f]{40})">`).FindAllStringSubmatch(body, -1)
	if len(commits) != 2 || commits[0][2] != rev2 || commits[1][2] != rev1 || !strings.Contains(body, `data-arrival="prod-1" data-revision="`+rev2+`"`) {
		t.Fatalf("revisions page: %v, want the two status commits at %s and %s:\n%.2000s", commits, rev2, rev1, body)
	}
	for at, want := range map[string]int{"cafe0000": http.StatusNotFound, "2000-01-01T00:00:00Z": http.StatusNotFound, "soon": http.StatusBadRequest} {
		resp, err := http.Get(base + "/?at=" + at)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("?at=%s: %d, want %d", at, resp.StatusCode, want)
		}
	}
	body = getPage(t, base+"/?at="+commits[1][1])
	if !strings.Contains(body, `data-time-travel="true"`) || !strings.Contains(body, `<td data-profile="web" data-state="Applied"`) || strings.Contains(body, rev2) {
		t.Errorf("the fleet at the first status commit is not the one at %s:\n%.2000s", rev1, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("regatta ui ended with %v, want a clean shutdown", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("regatta ui did not stop within 10s of its context ending (an open stream held it?)")
	}
}

// readMoved reads the stream to its next "moved" event and returns its data.
func readMoved(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		event := ""
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			switch line = strings.TrimSpace(line); {
			case line == "event: moved":
				event = "moved"
			case event == "moved" && strings.HasPrefix(line, "data: "):
				got <- strings.TrimPrefix(line, "data: ")
				return
			}
		}
	}()
	select {
	case v := <-got:
		if strings.HasPrefix(v, "error: ") {
			t.Fatalf("read the stream: %s", v)
		}
		return v
	case <-time.After(20 * time.Second):
		t.Fatal("no moved event within 20s")
	}
	return ""
}

// Off loopback the UI needs a login (--ui-auth): without one, refused.
func TestUIRefusesNonLoopbackAddress(t *testing.T) {
	dir := statusRepo(t, uiSnapshot(strings.Repeat("1", 40), status.StateApplied))
	for _, addr := range []string{":8080", "0.0.0.0:8080", "10.1.2.3:8080"} {
		code, _, stderr := run(t, "ui", "--addr", addr, dir)
		if code != ExitUsage || !strings.Contains(stderr, "is not loopback") {
			t.Errorf("ui --addr %s: exit %d, want %d and why:\n%s", addr, code, ExitUsage, stderr)
		}
	}
	if code, _, stderr := run(t, "ui", "--addr", "127.0.0.1:0", t.TempDir()); code != ExitUsage {
		t.Errorf("ui on a directory without a repository: exit %d, want %d:\n%s", code, ExitUsage, stderr)
	}
}

// startDaemonUI runs `regatta run --ui-addr` on a fleet of one real
// cluster and returns the UI's base URL once its fleet page shows the
// applied pair, with the page; the daemon stops at the test's end.
func startDaemonUI(t *testing.T, interval string) (string, string) {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "webui"}}})
	keyFile := "../../../render/sops/testdata/age.key"
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters/webui/cluster.yaml":         "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata: {name: webui, labels: {env: prod}}\nspec: {}\n",
		"clusters/webui/kubeconfig.sops.yaml": sopsKubeconfig(t, keyFile, "webui", env.Cluster("webui").Kubeconfig()),
		"profiles/hello.yaml":                 "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: hello}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n  addons:\n  - name: cm\n    manifests: {path: hello}\n",
		"hello/cm.yaml":                       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello, namespace: default}\ndata: {a: b}\n",
	})
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "fleet")
	ctx, cancel := context.WithCancel(context.Background())
	var stderr testenv.LogBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"run", "--repo", dir, "--sops-age-key-file", keyFile, "--metrics-addr", "",
			"--ui-addr", "127.0.0.1:0", "--interval", interval, "--status-interval", "100ms"}, io.Discard, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("run ended with exit %d:\n%s", code, stderr.String())
			}
		case <-time.After(60 * time.Second):
			t.Error("run did not stop within 60s")
		}
	})
	addrRE := regexp.MustCompile(`what=ui addr=(\S+)`)
	var base string
	body := ""
	deadline := time.Now().Add(60 * time.Second)
	for ; ; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the UI did not show the applied pair within 60s; page:\n%.2000s\nlog:\n%s", body, stderr.String())
		}
		if base == "" {
			if m := addrRE.FindStringSubmatch(stderr.String()); m != nil {
				base = "http://" + m[1]
			}
			continue
		}
		if body = tryGet(base + "/"); strings.Contains(body, `<td data-profile="hello" data-state="Applied"`) {
			return base, body
		}
	}
}

// tryGet is a page's body, or "" when it cannot be read yet.
func tryGet(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// `regatta run --ui-addr` serves the UI inside the daemon: fed by its
// status (OnStatus, chained after the notifier) before the status branch
// is read again, with the daemon's word on who reconciles each cluster.
func TestRunServesTheUI(t *testing.T) {
	// --interval 1h: the UI read the status branch once, before the
	// daemon made it; what it shows comes from OnStatus
	base, body := startDaemonUI(t, "1h")
	if !strings.Contains(body, `data-live="true"`) {
		t.Errorf("the daemon's status is not shown as live (the branch was read before it existed):\n%.1500s", body)
	}
	page := getPage(t, base+"/clusters/webui")
	if !strings.Contains(page, `<dd id="authority">this daemon reconciles this cluster now</dd>`) {
		t.Errorf("cluster page lacks the daemon's authority line:\n%.3000s", page)
	}
}

// Once the status branch holds the daemon's status, the UI shows the
// branch's commit rather than a live frame (the status read back from
// the branch compares equal to the daemon's).
func TestRunUIGivesWayToTheBranch(t *testing.T) {
	base, _ := startDaemonUI(t, "200ms")
	deadline := time.Now().Add(30 * time.Second)
	for body := ""; ; time.Sleep(100 * time.Millisecond) {
		body = tryGet(base + "/")
		if !strings.Contains(body, `data-live="true"`) && strings.Contains(body, `<div id="frame" data-commit="`) && !strings.Contains(body, `data-commit=""`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the UI still shows a live frame 30s after the status commit:\n%.1500s", body)
		}
	}
}

// With --repo the status branch is cloned and fetched every --refresh.
func TestUICommandReadsARemoteRepository(t *testing.T) {
	rev1, rev2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	dir := statusRepo(t, uiSnapshot(rev1, status.StateApplied))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &uiFlags{addr: "127.0.0.1:0", repoURL: "file://" + dir, statusBranch: DefaultStatusBranch, refresh: 50 * time.Millisecond,
		title: "regatta", logFormat: "text", logLevel: "info"}
	base, done := startUI(t, ctx, f, t.TempDir())
	if body := getPage(t, base+"/clusters/prod-1"); !strings.Contains(body, `<tr data-profile="web" data-state="Applied">`) {
		t.Errorf("cluster page from the cloned status branch lacks web Applied:\n%.2000s", body)
	}
	commitStatus(t, dir, uiSnapshot(rev2, status.StateFailed))
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(tryGet(base+"/clusters/prod-1"), `<tr data-profile="web" data-state="Failed">`) {
		if time.Now().After(deadline) {
			t.Fatal("the fetched status commit did not show within 20s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("regatta ui ended with %v", err)
	}
}
