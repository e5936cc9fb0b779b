package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/regatta-dev/regatta/cmd/regatta/app"
	"github.com/regatta-dev/regatta/reconciler"
)

// Daemon is regatta's daemon in this process, built by app.NewDaemon from
// the flags of `regatta run` (its defaults but for those StartDaemon
// sets), following a repository.
type Daemon struct {
	d      *app.Embedded
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
	ctx, cancel := context.WithCancel(ctx)
	d := &Daemon{cancel: cancel, done: make(chan error, 1), passes: make(chan Pass, 16)}
	args, err := o.args()
	if err != nil {
		cancel()
		return nil, err
	}
	ed, err := app.NewDaemon(ctx, args, app.EmbedOptions{Log: o.Log, Regatta: o.Regatta,
		OnPass: func(res reconciler.PassResult) { d.passes <- Pass{Result: res, At: time.Now()} }})
	if err != nil {
		cancel()
		return nil, err
	}
	d.d = ed
	go func() { d.done <- d.d.Run(ctx) }()
	return d, nil
}

// args are the `regatta run` flags of o. The chart repository is served
// on loopback, which --allow-url-prefix must allow.
func (o DaemonOptions) args() ([]string, error) {
	pw := filepath.Join(filepath.Dir(o.HelmCacheDir), "git-password")
	if err := os.MkdirAll(filepath.Dir(pw), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(pw, []byte(GitPassword), 0o600); err != nil {
		return nil, err
	}
	args := []string{"--repo", o.RepoURL, "--git-username", GitUser, "--git-password-file", pw,
		"--interval", "1h", "--helm-cache-dir", o.HelmCacheDir, "--allow-url-prefix", "http://127.0.0.1:"}
	if os.Getenv("REGATTA_BENCH_DEBUG") != "" {
		args = append(args, "--log-level", "debug")
	}
	if o.StatusInterval > 0 {
		args = append(args, "--status-interval", o.StatusInterval.String())
	}
	if o.HealthTimeout > 0 {
		args = append(args, "--health-timeout", o.HealthTimeout.String())
	}
	return args, nil
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
