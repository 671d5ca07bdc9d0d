// Command requireheader is kproxy with one filter more: it refuses
// produced records that lack a given header. It shows how a Go program
// builds its own kproxy with package server, and writes a filter against
// package filter.
//
//	requireheader --config kproxy.yaml --header trace-id
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "requireheader:", err)
		os.Exit(1)
	}
}

// run parses args and serves until ctx ends; kproxy logs to log.
func run(ctx context.Context, args []string, log, stderr io.Writer) error {
	fs := flag.NewFlagSet("requireheader", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "", "kproxy configuration `FILE`")
	header := fs.String("header", "trace-id", "the record header every produced record must carry")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *config == "" || *header == "" {
		return fmt.Errorf("want --config FILE and a non-empty --header")
	}
	return server.Run(ctx, server.Options{
		ConfigPath: *config,
		Filters:    []filter.Filter{RequireHeader{Header: *header}},
		LogOutput:  log,
	})
}
