package testenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
)

// Main starts the clusters of opts, stores the environment in *env, runs the
// package's tests and exits; call it from TestMain. The environment is
// stopped after the tests, and killed by the kernel if a test panics. When
// the clusters cannot start (a binary is missing, say) the run fails without
// running any test: tests that need the environment never skip.
func Main(m *testing.M, opts Options, env **Env) {
	os.Exit(run(m, opts, env))
}

func run(m *testing.M, opts Options, env **Env) int {
	flag.Parse()
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		return m.Run() // only listing tests: no clusters needed
	}
	if opts.Logf == nil && testing.Verbose() {
		opts.Logf = func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, format+"\n", args...)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	e, err := Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	defer e.Stop()
	*env = e
	return m.Run()
}

// StartT starts an environment for one test and stops it when the test and
// its subtests finish. It fails the test if the environment cannot start.
func StartT(t testing.TB, opts Options) *Env {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	e, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	return e
}
