package timeline

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// benchCommits is the length of the benchmark's status history; each
// commit moves one cluster in twenty (5%) to a new revision.
const benchCommits = 50

// benchHistory writes benchCommits status commits of n clusters.
func benchHistory(b *testing.B, n int) (*statusRepo, []string) {
	s := newStatusRepo(b)
	clusters := make([]status.ClusterStatus, n)
	for c := range clusters {
		clusters[c] = benchCluster(c, rev(0))
	}
	var commits []string
	for i := range benchCommits {
		for c := i % 20; c < n; c += 20 {
			clusters[c] = benchCluster(c, rev(i))
		}
		commits = append(commits, s.commit(fleet(rev(i), clusters...), t0.Add(time.Duration(i)*time.Minute)))
	}
	return s, commits
}

// benchCluster is a record of the size regatta writes for a cluster with
// three profiles.
func benchCluster(c int, r string) status.ClusterStatus {
	cs := cluster(fmt.Sprintf("cluster-%05d", c), r, "Applied")
	cs.Labels = map[string]string{"env": "prod", "region": fmt.Sprintf("region-%d", c%7), "tier": "gold"}
	cs.KubernetesVersion = "v1.37.2"
	for _, p := range []string{"cert-manager", "ingress", "monitoring"} {
		cs.Profiles = append(cs.Profiles, status.Profile{Name: p, State: "Applied", Revision: r, Objects: 12,
			RenderHash: "69daaf42f9dba19ba28419c28e45791edc2f56bfa9f1ea45ca40e8e5ac3cbed8", Health: "12 healthy"})
	}
	return cs
}

// BenchmarkTimeline reads a status branch of 50 commits of 500 and 2,000
// clusters, each commit changing 5% of the records, from the clone on
// this machine (local: go-git's file storage) and from the same
// repository fetched into memory (remote: what `regatta ui --repo`
// reads; the fetch is made once, outside the measure):
//   - cold: a new Reader lists the timeline (every entry computed);
//   - warm: the same Reader lists it again (entries kept);
//   - head: a new Reader decodes the head frame (every record);
//   - step-back: with the head decoded, a frame one commit older each
//     time (a tree diff from the nearest cached frame);
//   - remote/fetch: a new in-memory clone of the branch's whole history,
//     and the heap it holds.
func BenchmarkTimeline(b *testing.B) {
	for _, n := range []int{500, 2000} {
		s, commits := benchHistory(b, n)
		src := s.source()
		if _, err := New(src, branch, Options{}).Head(b.Context()); err != nil {
			b.Fatal(err)
		}
		for _, kind := range []string{"local", "remote"} {
			open := func(b *testing.B, frames int) *Reader {
				if kind == "remote" {
					return New(src, branch, Options{Frames: frames})
				}
				r, err := Local(s.work, branch, Options{Frames: frames})
				if err != nil {
					b.Fatal(err)
				}
				return r
			}
			benchReader(b, fmt.Sprintf("clusters=%d/%s", n, kind), open, commits)
		}
		b.Run(fmt.Sprintf("clusters=%d/remote/fetch", n), func(b *testing.B) { benchFetch(b, s) })
	}
}

// benchFetch fetches the branch's whole history into a new in-memory
// clone and reports the heap it holds (MiB-held).
func benchFetch(b *testing.B, s *statusRepo) {
	b.ReportAllocs()
	var held float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := New(s.source(), branch, Options{})
		if _, err := r.Timeline(b.Context(), 1); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
		runtime.KeepAlive(r)
	}
	b.ReportMetric(held, "MiB-held")
}

func benchReader(b *testing.B, name string, open func(*testing.B, int) *Reader, commits []string) {
	b.Run(name+"/cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if tl, err := open(b, 0).Timeline(b.Context(), benchCommits); err != nil || len(tl) != benchCommits {
				b.Fatal(len(tl), err)
			}
		}
	})
	b.Run(name+"/warm", func(b *testing.B) {
		b.ReportAllocs()
		r := open(b, 0)
		if _, err := r.Timeline(b.Context(), benchCommits); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := r.Timeline(b.Context(), benchCommits); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(name+"/head", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := open(b, 0).Head(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(name+"/step-back", func(b *testing.B) {
		b.ReportAllocs()
		r := open(b, 2)
		if _, err := r.Head(b.Context()); err != nil {
			b.Fatal(err)
		}
		i := len(commits) - 1
		for b.Loop() {
			if i--; i < 0 {
				i = len(commits) - 1
			}
			if _, err := r.Frame(b.Context(), commits[i]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
