// Command kproxy runs the transparent Kafka proxy. `kproxy --help` lists
// its subcommands and their flags; `kproxy --config FILE` is `kproxy run`.
//
// The proxy itself is package proxy's Run: this command parses flags
// and environment variables, turns signals into a context (SIGTERM and
// SIGINT drain and stop) and reload requests (SIGHUP), and calls it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	// Always handled: without a handler SIGHUP would kill the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	if limit, ok, err := memoryLimit(os.Getenv); err != nil {
		fmt.Fprintf(os.Stderr, "kproxy: %v\n", err)
		os.Exit(1) // a start-up error, as a bad configuration key is
	} else if ok {
		debug.SetMemoryLimit(limit)
	}
	code := run(ctx, os.Args[1:], cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, reload: hup})
	stop()
	os.Exit(code)
}

// cli is what a subcommand may use of the process it runs in.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	reload         <-chan os.Signal // reload requests (SIGHUP), for run
}

// command is one subcommand.
type command struct {
	name    string
	summary string // one line, for kproxy --help
	usage   string // the synopsis (and more) for kproxy NAME --help
	// setup declares the command's flags on fs and returns what runs it
	// once they are parsed; it returns an exit code.
	setup func(fs *flag.FlagSet, c cli) func(ctx context.Context, args []string) int
}

func commands() []command {
	return []command{runCommand(), validateCommand(), versionCommand(), hashPasswordCommand(), configDocCommand(), policyExplainCommand(), policyDiffCommand(), probeCommand()}
}

// run runs the subcommand args name (run when args start with a flag)
// and returns the process's exit code: 0 done, 1 failed, 2 bad usage.
func run(ctx context.Context, args []string, c cli) int {
	name := "run"
	if len(args) > 0 {
		switch arg := args[0]; {
		case arg == "help" || arg == "-h" || arg == "-help" || arg == "--help":
			printUsage(c.stdout)
			return 0
		case !strings.HasPrefix(arg, "-"):
			name, args = arg, args[1:]
			// A command of two words: "policy explain".
			if len(args) > 0 && hasCommand(name+" "+args[0]) {
				name, args = name+" "+args[0], args[1:]
			}
		}
	}
	for _, cmd := range commands() {
		if cmd.name != name {
			continue
		}
		fs := flag.NewFlagSet("kproxy "+cmd.name, flag.ContinueOnError)
		fs.SetOutput(c.stderr)
		fs.Usage = func() {
			fmt.Fprintf(c.stderr, "usage: %s\n", cmd.usage)
			printFlags(c.stderr, fs)
		}
		exec := cmd.setup(fs, c)
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		return exec(ctx, fs.Args())
	}
	if subs := subcommands(name); len(subs) > 0 {
		fmt.Fprintf(c.stderr, "kproxy %s: name one of its commands: %s\n", name, strings.Join(subs, ", "))
		return 2
	}
	fmt.Fprintf(c.stderr, "kproxy: unknown command %q\n\n", name)
	printUsage(c.stderr)
	return 2
}

// hasCommand reports whether name is a command.
func hasCommand(name string) bool {
	for _, cmd := range commands() {
		if cmd.name == name {
			return true
		}
	}
	return false
}

// subcommands are the second words of the commands of two words whose
// first is name ("policy": explain, diff).
func subcommands(name string) []string {
	var out []string
	for _, cmd := range commands() {
		if sub, ok := strings.CutPrefix(cmd.name, name+" "); ok {
			out = append(out, sub)
		}
	}
	return out
}

// printUsage lists every subcommand and its flags, one line each.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "kproxy is a transparent Kafka protocol proxy.\n\nusage: kproxy COMMAND [flags]   (kproxy --config FILE is kproxy run --config FILE)\n")
	for _, cmd := range commands() {
		fmt.Fprintf(w, "\n  %-15s %s\n", cmd.name, cmd.summary)
		fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
		cmd.setup(fs, cli{})
		printFlags(w, fs)
	}
	fmt.Fprint(w, "\nEach KPROXY_* variable named above sets its key unless the flag is given.\nkproxy COMMAND --help shows one command; docs/configuration.md documents every configuration key.\n")
}

// printFlags writes one line per flag of fs.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "      --%-24s %s\n", strings.TrimSpace(f.Name+" "+arg), usage)
	})
}
