package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version and commit are set at build time, for example by the container
// build: go build -ldflags "-X main.version=v1.4.0 -X main.commit=$(git rev-parse HEAD)".
// Left empty, kproxy version reports what the Go toolchain recorded.
var (
	version string
	commit  string
)

const kmsgModule = "github.com/twmb/franz-go/pkg/kmsg"

// versionCommand is `kproxy version`.
func versionCommand() command {
	return command{
		name:    "version",
		summary: "print kproxy's version and commit, the Go version and the kmsg (Kafka protocol) module version",
		usage:   "kproxy version",
		setup: func(_ *flag.FlagSet, c cli) func(context.Context, []string) int {
			return func(_ context.Context, args []string) int {
				if len(args) > 0 {
					fmt.Fprintln(c.stderr, "usage: kproxy version")
					return 2
				}
				info, _ := debug.ReadBuildInfo()
				printVersion(c.stdout, info, version, commit)
				return 0
			}
		},
	}
}

// printVersion writes one "name value" line for each of kproxy's version
// and commit (as set at build time, else as info records them), the Go
// version and the kmsg module's version. info may be nil.
func printVersion(w io.Writer, info *debug.BuildInfo, version, commit string) {
	kmsg := "unknown"
	version, commit = resolveVersion(info, version, commit)
	if info != nil {
		for _, dep := range info.Deps {
			if dep.Path == kmsgModule {
				if dep.Replace != nil {
					dep = dep.Replace
				}
				kmsg = dep.Version
			}
		}
	}
	fmt.Fprintf(w, "version %s\ncommit  %s\ngo      %s\nkmsg    %s\n",
		orUnknown(version), orUnknown(commit), runtime.Version(), kmsg)
}

// resolveVersion is version and commit as set at build time, else as
// info (nil: none) records them; "" when neither says.
func resolveVersion(info *debug.BuildInfo, version, commit string) (string, string) {
	if info != nil {
		if version == "" {
			version = info.Main.Version
		}
		if commit == "" {
			commit = vcsRevision(info)
		}
	}
	return version, commit
}

// vcsRevision is the commit the toolchain stamped, "-dirty" when the
// tree had changes, or "".
func vcsRevision(info *debug.BuildInfo) string {
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "-dirty"
	}
	return rev
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
