package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// statusBranch is regatta run's default status branch.
const statusBranch = "regatta/status"

// status waits for the status commit that carries the change (every pair
// Applied at its revision) and measures it.
func (fr *fleetRun) status(ctx context.Context) error {
	if !fr.o.Status {
		return nil
	}
	deadline := time.Now().Add(fr.within())
	want := fmt.Sprintf("Pairs: %d %s\n", 2*fr.o.Clusters, status.StateApplied)
	for {
		dash, err := fr.statusFile(ctx, status.Dashboard)
		if err == nil && strings.Contains(dash, "`"+status.ShortRevision(fr.changeRev)+"`") && strings.Contains(dash, want) {
			sc := &StatusCommit{Secs: time.Since(fr.changeDone).Seconds()}
			fr.res.Status = sc
			if err := fr.closeChange(ctx); err != nil {
				return err
			}
			readDashboard(sc, dash)
			if err := fr.statusTree(ctx, sc); err != nil {
				return err
			}
			fr.o.Logf("fleet %d: status commit %.1fs after the last cluster: %d files, %s, %d in the commit; dashboard %d lines, %s",
				fr.o.Clusters, sc.Secs, sc.Files, mib(sc.TreeBytes), sc.ChangedFiles, sc.DashboardLines, mib(int64(sc.DashboardBytes)))
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no status commit with every pair Applied at %s within %s (last error %v)", short(fr.changeRev), fr.within(), err)
		}
		if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

// statusFile fetches the status branch and reads one of its files.
func (fr *fleetRun) statusFile(ctx context.Context, path string) (string, error) {
	if _, err := runGit(ctx, fr.git.WorkDir(), "fetch", "-q", "origin", statusBranch); err != nil {
		return "", err
	}
	return runGit(ctx, fr.git.WorkDir(), "show", "FETCH_HEAD:"+path)
}

// statusTree sizes the fetched status tree and the commit's change.
func (fr *fleetRun) statusTree(ctx context.Context, sc *StatusCommit) error {
	out, err := runGit(ctx, fr.git.WorkDir(), "ls-tree", "-r", "-l", "FETCH_HEAD")
	if err != nil {
		return err
	}
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasPrefix(f[4], "status/") {
			continue
		}
		n, _ := strconv.ParseInt(f[3], 10, 64)
		sc.TreeBytes += n
		sc.Files++
	}
	// --root: a status commit may be the branch's only commit.
	changed, err := runGit(ctx, fr.git.WorkDir(), "diff-tree", "--root", "--no-commit-id", "-r", "--name-only", "FETCH_HEAD")
	if err != nil {
		return err
	}
	sc.ChangedFiles = len(strings.Fields(changed))
	return nil
}

// readDashboard finds the dashboard's summary, its first cluster row and
// its problems: how far a reader scrolls to each.
func readDashboard(sc *StatusCommit, dash string) {
	sc.DashboardBytes = len(dash)
	n := 0
	for line := range strings.Lines(dash) {
		n++
		switch {
		case sc.SummaryLine == 0 && strings.HasPrefix(line, "Pairs: "):
			sc.SummaryLine = n
		case sc.TableLine == 0 && strings.HasPrefix(line, "|---"):
			sc.TableLine = n + 1
		case sc.ProblemsLine == 0 && strings.HasPrefix(line, "## Problems"):
			sc.ProblemsLine = n
		}
	}
	sc.DashboardLines = n
}
