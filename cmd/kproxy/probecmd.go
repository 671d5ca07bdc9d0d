package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"
)

// probeCommand is `kproxy probe URL`: an HTTP GET that exits 0 on a 2xx
// answer and 1 on anything else, for exec probes in an image without a
// shell or curl (kubelet's httpGet probes the pod address, which a
// loopback-bound admin listener does not answer on).
func probeCommand() command {
	return command{
		name:    "probe",
		summary: "GET a URL (such as http://127.0.0.1:9644/readyz): exit 0 on a 2xx answer, 1 otherwise, for exec health probes",
		usage:   "kproxy probe [--timeout DURATION] URL",
		setup: func(fs *flag.FlagSet, c cli) func(context.Context, []string) int {
			timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the answer (a Go `DURATION`)")
			return func(ctx context.Context, args []string) int {
				if len(args) != 1 {
					fmt.Fprintln(c.stderr, "usage: kproxy probe [--timeout DURATION] URL")
					return 2
				}
				if err := probe(ctx, args[0], *timeout); err != nil {
					fmt.Fprintf(c.stderr, "kproxy probe: %v\n", err)
					return 1
				}
				return 0
			}
		},
	}
}

// probe GETs url within timeout and fails unless the answer is 2xx.
func probe(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("request %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
