// Command regatta-bench runs regatta's benchmark suite and writes
// bench/REPORT.md; `make bench` runs it. See package bench.
//
//	go run ./bench/cmd/regatta-bench [-phases rollout,daemon,scale,gobench,progressive] [-rounds 5]
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
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "regatta-bench:", err)
		os.Exit(1)
	}
}
