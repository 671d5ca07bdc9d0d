// Command requireheader is kproxy with one filter more: it refuses
// produced records that lack a given header. It shows how a Go program
// builds its own kproxy with package proxy, writes a filter against
// package filter, and gives it its own section of the configuration file:
//
//	require_header: {name: trace-id, topics: [orders]}
//
// at the top level or in a virtual cluster. Run it as kproxy:
//
//	requireheader --config kproxy.yaml
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
	"github.com/kproxy/kproxy/proxy"
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
	config := fs.String("config", "", "kproxy configuration `FILE`, with a require_header section")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *config == "" {
		return fmt.Errorf("want --config FILE")
	}
	reload := make(chan os.Signal, 1)
	signal.Notify(reload, syscall.SIGHUP)
	defer signal.Stop(reload)
	return proxy.Run(ctx, proxy.Options{
		ConfigPath: *config,
		Plugins:    []filter.Plugin{Plugin()},
		LogOutput:  log,
		Reload:     reload,
	})
}
