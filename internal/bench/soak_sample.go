package bench

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// SoakSample is one reading of the soak: regatta's process (memory,
// goroutines, connections), its open file descriptors, its clone's size
// on disk, the watches open on the fleet's API servers and the requests
// they served per cluster per minute since the last reading.
type SoakSample struct {
	At float64 `json:"atSeconds"`
	ProcSample
	FDs        int   `json:"openFds"`
	CloneBytes int64 `json:"cloneBytes"`
	// UpstreamBytes is the fleet repository on the Git server: the clone
	// grows with it (the workload's commits and regatta's status commits).
	UpstreamBytes int64   `json:"upstreamBytes"`
	Watches       float64 `json:"apiServerWatches"`
	Requests      float64 `json:"requestsPerClusterPerMinute"`
}

// requestMeter turns the fleet's API servers' request counters into a
// rate, server by server (a restarted server's counters start again).
type requestMeter struct {
	last map[string]float64
	at   time.Time
}

// sample reads regatta and the API servers every o.SampleEvery.
func (s *soakRun) sample(ctx context.Context) {
	m := &requestMeter{last: map[string]float64{}}
	for k := 0; ctx.Err() == nil; k++ {
		if sleepCtx(ctx, time.Until(s.res.start.Add(time.Duration(k)*s.o.SampleEvery))) != nil {
			return
		}
		sm, err := s.sampleOnce(ctx, m)
		if err != nil {
			if ctx.Err() == nil {
				s.o.Logf("soak: sample %d: %v", k, err)
			}
			continue
		}
		s.res.mu.Lock()
		s.res.Samples = append(s.res.Samples, sm)
		s.res.mu.Unlock()
	}
}

// sampleOnce is one reading.
func (s *soakRun) sampleOnce(ctx context.Context, m *requestMeter) (SoakSample, error) {
	sm := SoakSample{At: time.Since(s.res.start).Seconds()}
	var err error
	if sm.ProcSample, err = sampleProc(ctx, s.fr.child, s.fr.le.Ports()); err != nil {
		return sm, err
	}
	if sm.FDs, err = openFDs(s.fr.child.Pid()); err != nil {
		return sm, err
	}
	if sm.CloneBytes, err = diskUsage(filepath.Join(s.o.Dir, "cache")); err != nil {
		return sm, err
	}
	if sm.UpstreamBytes, err = diskUsage(filepath.Join(s.o.Dir, "git", "srv")); err != nil {
		return sm, err
	}
	sm.Watches, sm.Requests = s.scrapeServers(ctx, m)
	return sm, nil
}

// scrapeServers sums the watches open on the running API servers and
// their requests per cluster per minute since the last call (servers
// down are left out of both).
func (s *soakRun) scrapeServers(ctx context.Context, m *requestMeter) (watches, perClusterMinute float64) {
	now := time.Now()
	var served float64
	for _, srv := range s.fr.le.Servers {
		if !srv.Running() {
			continue
		}
		body, err := scrapeMetrics(ctx, srv.RESTConfig())
		if err != nil {
			continue
		}
		watches += openWatches(body)
		rc, err := parseRequests(bytes.NewReader(body))
		if err != nil {
			continue
		}
		w, r := rc.Totals()
		total := w + r
		if prev, ok := m.last[srv.Name()]; ok && total >= prev {
			served += total - prev
		} else if ok {
			served += total // restarted: its counters began again
		}
		m.last[srv.Name()] = total
	}
	if !m.at.IsZero() {
		perClusterMinute = served / float64(s.o.Clusters) / now.Sub(m.at).Minutes()
	}
	m.at = now
	return watches, perClusterMinute
}

// openWatches sums an API server's apiserver_longrunning_requests of verb
// WATCH: the watches open on it, every client's.
func openWatches(metrics []byte) float64 {
	samples, err := parseSamples(bytes.NewReader(metrics))
	if err != nil {
		return 0
	}
	var n float64
	for k, v := range samples {
		if strings.HasPrefix(k, "apiserver_longrunning_requests{") && strings.Contains(k, `verb="WATCH"`) {
			n += v
		}
	}
	return n
}

// openFDs counts a process's open file descriptors.
func openFDs(pid int) (int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(ents), err
}

// diskUsage is the disk space the files under dir take, as du counts it
// (allocated blocks); 0 when dir does not exist yet.
func diskUsage(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // a file removed meanwhile
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		}
		return nil
	})
	return n, err
}
