package repo

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// Status history as a busy fleet writes it: statusHistoryCommits status
// commits of a fleet of statusHistoryClusters, every statusHistoryWide-th
// of them fleet-wide (every record rewritten, about 0.6 MiB: a change that
// reaches every cluster), the others statusHistoryFew records (health,
// drift, a cluster that moved). Override with REGATTA_BENCH_STATUS_COMMITS,
// _CLUSTERS, _WIDE and _FEW.
var (
	statusHistoryCommits  = envInt("REGATTA_BENCH_STATUS_COMMITS", 10000)
	statusHistoryClusters = envInt("REGATTA_BENCH_STATUS_CLUSTERS", 1000)
	statusHistoryWide     = envInt("REGATTA_BENCH_STATUS_WIDE", 10)
	statusHistoryFew      = envInt("REGATTA_BENCH_STATUS_FEW", 10)
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkStatusHistorySize writes a status history (see above) into a
// bare repository with git fast-import, then reports what a fresh
// `git clone --mirror` of it holds (mirror-MiB: bytes of the clone's
// objects and refs), without retention and after FoldHistory kept 1,000
// and 2,000 commits (a tenth and a fifth of the history:
// --status-history-keep 1000 holds between the two), what each fold cost
// an in-memory clone in time, peak heap and heap held right after it, with
// the server allowing filters (the fold fetches commits only), and what
// the host's repository holds after its own `git gc`. Run it
// once: go test -run '^$' -bench StatusHistorySize -benchtime 1x ./repo/
func BenchmarkStatusHistorySize(b *testing.B) {
	for b.Loop() {
		root := b.TempDir()
		up := newUpstream(b, root, "fleet.git")
		start := time.Now()
		writeStatusHistory(b, up.bare)
		runGit(b, up.bare, "config", "uploadpack.allowFilter", "true") // as Git hosts do: folds fetch commits only
		b.ReportMetric(time.Since(start).Seconds(), "write-s")
		b.ReportMetric(mirrorMiB(b, up.bare), "none-mirror-MiB")
		for _, keep := range []int{statusHistoryCommits / 5, statusHistoryCommits / 10} {
			src, err := NewSource(Options{URL: up.bare})
			if err != nil {
				b.Fatal(err)
			}
			heap0, t0 := heapMiB(), time.Now()
			peak := peakHeap()
			res, err := src.FoldHistory(context.Background(), DefaultStatusBranch, keep)
			if err != nil || !res.Folded {
				b.Fatalf("fold to %d: %+v %v", keep, res, err)
			}
			b.ReportMetric(time.Since(t0).Seconds(), fmt.Sprintf("keep%d-fold-s", keep))
			b.ReportMetric(peak()-heap0, fmt.Sprintf("keep%d-fold-peak-heap-MiB", keep))
			b.ReportMetric(heapMiB()-heap0, fmt.Sprintf("keep%d-fold-heap-MiB", keep))
			runtime.KeepAlive(src) // what the clone holds after the fold is measured
			b.ReportMetric(mirrorMiB(b, up.bare), fmt.Sprintf("keep%d-mirror-MiB", keep))
		}
		runGit(b, up.bare, "gc", "-q", "--prune=now")
		b.ReportMetric(dirMiB(b, filepath.Join(up.bare, "objects")), fmt.Sprintf("keep%d-host-after-gc-MiB", statusHistoryCommits/10))
	}
}

// writeStatusHistory streams the status commits into the bare
// repository's status branch through git fast-import.
func writeStatusHistory(tb testing.TB, bare string) {
	tb.Helper()
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env = bare, gitEnv(bare)
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(in, 1<<20)
	for i := range statusHistoryCommits {
		statusCommitStream(w, i)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		tb.Fatal(err)
	}
}

// statusCommitStream writes commit i: the records it changes, as the
// daemon's status commits carry them (statusRecord, the fixture of the
// status commit benchmarks).
func statusCommitStream(w io.Writer, i int) {
	n, first := statusHistoryFew, i*statusHistoryFew
	if i%statusHistoryWide == 0 {
		n, first = statusHistoryClusters, 0
	}
	msg := fmt.Sprintf("regatta: status of %07d\n\n%s: %040d\n", i, TrailerSourceRevision, i)
	fmt.Fprintf(w, "commit refs/heads/%s\ncommitter regatta <regatta@example.com> %d +0000\ndata %d\n%s",
		DefaultStatusBranch, 1700000000+10*i, len(msg), msg)
	for k := range n {
		c := (first + k) % statusHistoryClusters
		rec := fmt.Sprintf(statusRecord, c, i, i, i)
		fmt.Fprintf(w, "M 100644 inline status/clusters/c%04d.yaml\ndata %d\n%s\n", c, len(rec), rec)
	}
	fmt.Fprint(w, "\n")
}

// mirrorMiB is the size of a fresh `git clone --mirror` of bare, packed
// as a clone over the network is (--no-local: no hard links, only what
// the refs reach).
func mirrorMiB(tb testing.TB, bare string) float64 {
	tb.Helper()
	dst := filepath.Join(tb.TempDir(), "mirror.git")
	runGit(tb, filepath.Dir(dst), "clone", "-q", "--mirror", "--no-local", bare, dst)
	mib := dirMiB(tb, dst)
	os.RemoveAll(dst)
	return mib
}

// heapMiB is the heap in use after a collection.
func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// peakHeap samples the heap every 20 ms until the returned function is
// called, which returns the highest figure seen.
func peakHeap() func() float64 {
	stop, done := make(chan struct{}), make(chan float64)
	go func() {
		var m runtime.MemStats
		peak := 0.0
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, float64(m.HeapAlloc)/(1<<20))
			select {
			case <-stop:
				done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 { close(stop); return <-done }
}

// dirMiB adds up the bytes of the files under dir.
func dirMiB(tb testing.TB, dir string) float64 {
	tb.Helper()
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return float64(n) / (1 << 20)
}
