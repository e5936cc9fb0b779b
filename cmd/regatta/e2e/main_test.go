package e2e

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/regatta-dev/regatta/cmd/regatta/app"
)

// execAsRegatta, set in a child's environment, makes the test binary run
// as the regatta command with its arguments.
const execAsRegatta = "E2E_EXEC_AS_REGATTA"

func TestMain(m *testing.M) {
	if os.Getenv(execAsRegatta) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := app.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
