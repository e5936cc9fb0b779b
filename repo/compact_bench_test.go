package repo

import (
	"context"
	"io/fs"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkStatusCommitRetained commits and pushes, over HTTP, status
// commits of 1,000 changed records from an in-memory clone, as a daemon
// does for as long as it runs, and reports the heap each one leaves
// behind (retained-B/op, after a GC): 0.95 MiB before the clone forgot
// what nothing reads and pushes closed their connections, a few hundred
// bytes since.
func BenchmarkStatusCommitRetained(b *testing.B) {
	src, _, rev := httpSource(b, b.TempDir())
	ctx := context.Background()
	commit := func(i int) {
		if _, err := src.CommitAndPush(ctx, statusRequest(statusFiles(1000, i), rev)); err != nil {
			b.Fatal(err)
		}
	}
	commit(-1) // the first status commit: the tree every later one builds on
	heap := func() float64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc)
	}
	before := heap()
	i := 0
	for b.Loop() {
		commit(i)
		i++
	}
	b.ReportMetric((heap()-before)/float64(i), "retained-B/op")
	runtime.KeepAlive(src) // what it holds is what is measured
}

// BenchmarkStatusCommitOnDisk commits and pushes status commits of 1,000
// changed records from a clone on disk (--cache-dir), and reports the
// disk (disk-B/op, in 4 KiB blocks) and files (files/op) each one leaves
// behind: about 4 MiB and 1,000 files when each record was a loose object
// and nothing was ever removed, about 15 KiB and no file since.
func BenchmarkStatusCommitOnDisk(b *testing.B) {
	dir := b.TempDir()
	src, _, rev := httpSourceAt(b, b.TempDir(), dir)
	ctx := context.Background()
	commit := func(i int) {
		if _, err := src.CommitAndPush(ctx, statusRequest(statusFiles(1000, i), rev)); err != nil {
			b.Fatal(err)
		}
	}
	commit(-1)
	bytes0, files0 := diskUsage(b, dir)
	i := 0
	for b.Loop() {
		commit(i)
		i++
	}
	bytes1, files1 := diskUsage(b, dir)
	b.ReportMetric(float64(bytes1-bytes0)/float64(i), "disk-B/op")
	b.ReportMetric(float64(files1-files0)/float64(i), "files/op")
}

// diskUsage adds up the files under dir, each in whole 4 KiB blocks.
func diskUsage(tb testing.TB, dir string) (bytes, files int64) {
	tb.Helper()
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files++
		bytes += (fi.Size() + 4095) / 4096 * 4096
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return bytes, files
}
