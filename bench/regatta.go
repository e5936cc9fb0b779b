package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/reconciler"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/repo"
)

// Daemon is regatta's daemon in this process, wired as `regatta run`
// wires it with its default options, following a repository.
type Daemon struct {
	d      *reconciler.Daemon
	charts *helm.Renderer
	cancel context.CancelFunc
	stop   sync.Once
	done   chan error
	passes chan Pass
}

// Pass is a finished pass and when it finished (status committed).
type Pass struct {
	Result reconciler.PassResult
	At     time.Time
}

// DaemonOptions configures StartDaemon.
type DaemonOptions struct {
	RepoURL      string
	HelmCacheDir string
	Log          io.Writer
	// StatusInterval and HealthTimeout as regatta run's flags (zero: their
	// defaults).
	StatusInterval time.Duration
	HealthTimeout  time.Duration
	// Regatta is the regatta binary, which renders chart templates in
	// worker processes as `regatta run` does; empty renders them in this
	// process.
	Regatta string
}

// StartDaemon builds a daemon and runs it: it fetches the branch at once
// and runs a pass; later commits are seen on Trigger (the poll interval
// is an hour), as a push webhook would make it.
func StartDaemon(ctx context.Context, o DaemonOptions) (*Daemon, error) {
	level := slog.LevelInfo
	if os.Getenv("REGATTA_BENCH_DEBUG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: level}))
	src, err := repo.NewSource(repo.Options{URL: o.RepoURL, Auth: repo.Auth{Username: GitUser, Password: GitPassword}, Logger: log})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	d := &Daemon{
		charts: helm.New(helm.Options{CacheDir: o.HelmCacheDir, Worker: o.helmWorker()}),
		cancel: cancel,
		done:   make(chan error, 1),
		passes: make(chan Pass, 16),
	}
	watch := repo.DefaultWatchOptions()
	watch.Interval, watch.DisableFSNotify = time.Hour, true
	d.d = reconciler.Build(ctx, reconciler.Setup{
		Daemon: reconciler.DaemonOptions{
			Source:         src,
			Watch:          watch,
			StatusBranch:   "regatta/status",
			StatusAuthor:   repo.Signature{Name: "regatta", Email: "regatta@example.com"},
			StatusInterval: o.StatusInterval,
			OnPass:         func(res reconciler.PassResult) { d.passes <- Pass{Result: res, At: time.Now()} },
		},
		Apply: apply.DefaultOptions(),
		Reconciler: reconciler.Options{
			Renderer:      render.New(render.Options{Helm: d.charts}),
			Log:           log,
			HealthTimeout: o.HealthTimeout,
		},
	})
	go func() { d.done <- d.d.Run(ctx) }()
	return d, nil
}

// helmWorker runs chart templates in workers of o.Regatta, with regatta
// run's default limits.
func (o DaemonOptions) helmWorker() *helm.WorkerOptions {
	if o.Regatta == "" {
		return nil
	}
	return &helm.WorkerOptions{Command: []string{o.Regatta, "__helm-render"}}
}

// Trigger makes the daemon fetch now.
func (d *Daemon) Trigger() { d.d.Trigger() }

// CacheStats returns the render cache's hits and misses.
func (d *Daemon) CacheStats() (uint64, uint64) { return d.d.Renderer().CacheStats() }

// WaitRevision waits for the first pass of rev; it fails when that pass did
// not converge.
func (d *Daemon) WaitRevision(ctx context.Context, rev string, within time.Duration) (Pass, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return Pass{}, fmt.Errorf("no pass of %s within %s", short(rev), within)
		case p := <-d.passes:
			if p.Result.Snapshot.Fleet.SourceRevision != rev {
				continue
			}
			if !p.Result.Converged {
				return p, fmt.Errorf("pass of %s did not converge: %s", short(rev), firstProblem(p.Result))
			}
			return p, nil
		}
	}
}

// Stop stops the daemon and its drift watchers; later calls do nothing.
func (d *Daemon) Stop() {
	d.stop.Do(func() {
		d.cancel()
		<-d.done
		d.d.Close()
		_ = d.charts.Close()
	})
}

func firstProblem(res reconciler.PassResult) string {
	for _, e := range res.Snapshot.Fleet.Errors {
		return e.File + ": " + e.Message
	}
	for _, c := range res.Snapshot.Clusters {
		if !c.Reachable {
			return "cluster " + c.Cluster + " unreachable: " + c.Error
		}
		for _, p := range c.Profiles {
			if p.State != "Applied" {
				msg := ""
				if p.Error != nil {
					msg = p.Error.Message
				}
				return fmt.Sprintf("cluster %s profile %s: %s %s %s", c.Cluster, p.Name, p.State, p.Message, msg)
			}
		}
	}
	return "unknown"
}

func short(rev string) string {
	if len(rev) > 8 {
		return rev[:8]
	}
	return rev
}
