package bench

import (
	"fmt"
	"strings"
	"time"
)

// reportSoak is the soak's section: the command, the run, each series'
// slope per hour and verdict, and the correctness checks.
func reportSoak(b *strings.Builder, r *Results) {
	b.WriteString("## 8. Soak: a long life under churn (issue 54)\n\n")
	s := r.Soak
	if s == nil {
		b.WriteString("Not measured in this run (`make soak-short`, or `-phases soak`).\n\n")
		return
	}
	how(b, "`regatta run` on logical clusters (the fleet phase's setup) under commits, drift, event resources, an API server restarted, one stopped and the Git host down; "+
		"each series' least-squares slope after a 20% warm-up, `growing` when significant (> 2 standard errors) and material (> 5% of its mean over the run)", "soak")
	run := r.Run("soak")
	fmt.Fprintf(b, "`%s` at `%s` on %s: %d logical clusters on %d API servers, %d objects each, %s of workload after the first rollout (p50 %s, last %s); "+
		"a commit every %s, drift every %s, a reading every %s, outages of %s.\n\n",
		soakCommand(s), run.Commit, run.Date.UTC().Format("2006-01-02"), s.Clusters, s.Servers, s.Objects, soakDur(s.Secs),
		secs(s.First.P50), secs(s.First.Last), soakDur(s.CommitSec), soakDur(s.DriftSec), soakDur(s.SampleSec), soakDur(s.OutageSec))
	if s.Secs < 3600 {
		b.WriteString("This is the short form: the long form (hours at 1,000 clusters, the command's defaults) has not been run; its slopes are the ones to judge a leak by.\n\n")
	}
	b.WriteString("| series | mean | slope per hour | ± 1 standard error | change over the run | verdict |\n|---|---|---|---|---|---|\n")
	for _, t := range s.Trends {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %+.1f%% | %s |\n", t.Series, soakFigure(t.Mean, t.Unit),
			soakSigned(t.SlopePerHour, t.Unit), soakFigure(t.StdErrPerHour, t.Unit), 100*t.Change, soakVerdict(t.Verdict))
	}
	b.WriteString("\n| check | held | figures |\n|---|---|---|\n")
	for _, c := range s.Checks {
		held := "yes"
		if !c.OK {
			held = "**no**"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", c.Name, held, strings.ReplaceAll(c.Detail, "|", "/"))
	}
	b.WriteString("\n")
	for _, e := range s.Timeline {
		fmt.Fprintf(b, "- %s: %s\n", secs(e.At), e.What)
	}
	if s.Err != "" {
		fmt.Fprintf(b, "- error: %s\n", s.Err)
	}
	b.WriteString("\n")
}

// soakCommand is the command line of the run.
func soakCommand(s *SoakResult) string {
	return fmt.Sprintf("go run ./internal/bench/cmd/regatta-bench -phases soak -soak-clusters %d -soak-duration %s -soak-commit-every %s -soak-sample-every %s -soak-outage %s",
		s.Clusters, soakDur(s.Secs), soakDur(s.CommitSec), soakDur(s.SampleSec), soakDur(s.OutageSec))
}

// soakDur is seconds as a Go duration (10m0s), as the flags take it.
func soakDur(secs float64) string { return time.Duration(secs * float64(time.Second)).String() }

func soakFigure(v float64, unit string) string {
	if unit == "bytes" {
		return mib(int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}

func soakSigned(v float64, unit string) string {
	if v < 0 {
		return "−" + soakFigure(-v, unit)
	}
	return "+" + soakFigure(v, unit)
}

func soakVerdict(v string) string {
	if v == VerdictGrowing {
		return "**growing**"
	}
	return v
}
