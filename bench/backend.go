package bench

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

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
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		io.Copy(io.Discard, stdin)
		stop <- syscall.SIGTERM
	}()
	<-stop
	return 0
}

// startBackend runs the backend subcommand and returns it as an upstream,
// with the process to stop.
func startBackend(o *Options, workDir string) (*upstream, *target, error) {
	args := selfCommand(o, "backend")
	t := &target{name: "backend", logPath: filepath.Join(workDir, "backend.log")}
	cmd, logf, err := command(o, t.logPath, args[0], args[1:]...)
	if err != nil {
		return nil, nil, err
	}
	defer logf.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if t.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start backend: %w", err)
	}
	t.proc = cmd
	var addr string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) == 2 && f[0] == "listen" {
			addr = f[1]
		}
		if len(f) == 1 && f[0] == "ready" && addr != "" {
			go io.Copy(io.Discard, out)
			return &upstream{seeds: []string{addr}, brokers: []string{addr}}, t, nil
		}
	}
	t.stop()
	return nil, nil, fmt.Errorf("backend exited before it was ready; log: %s", tail(t.logPath))
}
