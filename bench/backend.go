package bench

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/kproxy/kproxy/bench/relay"
	"github.com/kproxy/kproxy/bench/relaytest"
)

// BackendMain is the body of the hidden "backend" subcommand: a
// relaytest.Backend (a stand-in broker answering ApiVersions and Metadata,
// node 0 at its own address) in a process of its own. It is the upstream of
// the connection-scale measurement, which needs nothing more, so that the
// upstream side of N pairs does not count against this process's file
// descriptors. It prints "listen ADDR" and "ready", and runs until SIGTERM,
// SIGINT or the end of its standard input.
func BackendMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backend", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	be, err := relaytest.NewBackend()
	if err != nil {
		fmt.Fprintln(stderr, "backend:", err)
		return 1
	}
	fmt.Fprintf(stdout, "listen %s\nready\n", be.Addr())
	relay.WaitForStop(stdin)
	return 0
}

// startBackend runs the backend subcommand and returns it as an upstream,
// with the process to stop.
func startBackend(o *Options, workDir string) (*upstream, *target, error) {
	t := &target{name: "backend", logPath: filepath.Join(workDir, "backend.log")}
	var addr string
	err := startChild(o, t, selfCommand(o, "backend"), func(f []string) {
		if len(f) == 2 && f[0] == "listen" {
			addr = f[1]
		}
	})
	if err != nil {
		return nil, nil, err
	}
	if addr == "" {
		t.stop()
		return nil, nil, fmt.Errorf("backend was ready without saying where it listens; log: %s", tail(t.logPath))
	}
	return &upstream{seeds: []string{addr}, brokers: []string{addr}}, t, nil
}
