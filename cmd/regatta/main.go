// Command regatta is a GitOps fleet reconciler: it follows a fleet-infra Git
// repository and keeps many Kubernetes clusters in the state it describes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/regatta-dev/regatta/cmd/regatta/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
