// Command regatta-bench runs regatta's benchmark suite and writes
// internal/bench/REPORT.md; `make bench` runs it. See package bench.
//
//	go run ./internal/bench/cmd/regatta-bench [-phases rollout,daemon,scale,gobench,progressive] [-rounds 5]
//	go run ./internal/bench/cmd/regatta-bench idle -bins before=…,after=… [-rounds 3] [-wait 90s]
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "scale-child" {
		os.Exit(scaleChild(os.Args[2:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	command := run
	if len(os.Args) > 1 && os.Args[1] == "idle" {
		command = func(ctx context.Context, args []string) error { return idleMain(ctx, args[1:]) }
	}
	if err := command(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "regatta-bench:", err)
		os.Exit(1)
	}
}
