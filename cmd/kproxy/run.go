package main

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/kproxy/kproxy/proxy"
)

// runCommand is `kproxy run` (and `kproxy --config FILE`): serve until
// SIGTERM or SIGINT, then drain; SIGHUP reloads the policy.
func runCommand() command {
	return configCommand("run", "run the proxy (the default: kproxy --config FILE); SIGHUP reloads the policy, SIGTERM drains and stops",
		func(ctx context.Context, opts proxy.Options, c cli) int {
			opts.LogOutput, opts.Reload = c.stdout, c.reload
			if err := proxy.Run(ctx, opts); err != nil {
				fmt.Fprintf(c.stderr, "kproxy: %v\n", err)
				return 1
			}
			return 0
		})
}

// validateCommand is `kproxy validate`: load the configuration as run
// would, with the same overrides, read the files it names, and report.
func validateCommand() command {
	var skipFiles *bool
	cmd := configCommand("validate", "check a configuration file (and overrides) as run would load it, and the files it names, then exit",
		func(_ context.Context, opts proxy.Options, c cli) int {
			opts.SkipFileChecks = *skipFiles
			warnings, err := proxy.Validate(opts)
			if err != nil {
				fmt.Fprintln(c.stderr, err)
				return 1
			}
			// Warnings do not fail validation: the file is valid, and may mean it.
			for _, w := range warnings {
				fmt.Fprintf(c.stderr, "warning: %s\n", w)
			}
			fmt.Fprintf(c.stdout, "%s: ok\n", opts.ConfigPath)
			return 0
		})
	setup := cmd.setup
	cmd.setup = func(fs *flag.FlagSet, c cli) func(context.Context, []string) int {
		skipFiles = fs.Bool("skip-file-checks", false, "do not read the certificate, CA, password, secret and JWKS files the configuration names (a file written for another machine, such as a pod's mounted Secrets)")
		return setup(fs, c)
	}
	return cmd
}

// configCommand is a command of the configuration file: it takes
// --config and the overrides' flags, and act runs it with the options
// they (and the environment) give.
func configCommand(name, summary string, act func(context.Context, proxy.Options, cli) int) command {
	return command{
		name:    name,
		summary: summary,
		usage:   "kproxy " + name + " --config FILE [flags]",
		setup: func(fs *flag.FlagSet, c cli) func(context.Context, []string) int {
			opts := configFlags(fs, c)
			return func(ctx context.Context, args []string) int {
				o, ok := opts(args)
				if !ok {
					return 2
				}
				return act(ctx, o, c)
			}
		},
	}
}

// configFlags declares --config and a flag per overridable key on fs. The
// function it returns builds the server options once fs is parsed: each
// key is set by its KPROXY_* variable, unless its flag was given. It
// reports bad usage (no --config, stray arguments) on stderr.
func configFlags(fs *flag.FlagSet, c cli) func(args []string) (proxy.Options, bool) {
	path := fs.String("config", "", "path to the YAML configuration `FILE` (required)")
	type setting struct{ key, flag, env string }
	var settings []setting
	for _, key := range proxy.OverridableKeys() {
		s := setting{key: key, flag: overrideFlag(key), env: overrideEnv(key)}
		fs.String(s.flag, "", fmt.Sprintf("sets %s to `%s` (env %s)", key, overrideMeta(key), s.env))
		settings = append(settings, s)
	}
	return func(args []string) (proxy.Options, bool) {
		if *path == "" || len(args) > 0 {
			fmt.Fprintf(c.stderr, "%s: want --config FILE and no arguments (kproxy --help lists every command)\n", fs.Name())
			return proxy.Options{}, false
		}
		info, _ := debug.ReadBuildInfo()
		v, commit := resolveVersion(info, version, commit)
		opts := proxy.Options{ConfigPath: *path, Version: v, Commit: commit}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for _, s := range settings {
			if set[s.flag] {
				opts.Overrides = append(opts.Overrides, proxy.Override{Key: s.key, Value: fs.Lookup(s.flag).Value.String(), Source: "--" + s.flag})
			} else if v := c.getenv(s.env); v != "" {
				opts.Overrides = append(opts.Overrides, proxy.Override{Key: s.key, Value: v, Source: s.env})
			}
		}
		return opts, true
	}
}

// overrideFlag names the flag for key: listeners.bind_host is
// --bind-host, admin.listen is --admin-listen.
func overrideFlag(key string) string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(strings.TrimPrefix(key, "listeners."))
}

// overrideEnv names the environment variable for key: listeners.bind_host
// is KPROXY_BIND_HOST, admin.listen is KPROXY_ADMIN_LISTEN.
func overrideEnv(key string) string {
	return "KPROXY_" + strings.ToUpper(strings.ReplaceAll(overrideFlag(key), "-", "_"))
}

// overrideMeta names what key's value is, for --help.
func overrideMeta(key string) string {
	switch {
	case strings.HasSuffix(key, "_host"):
		return "HOST"
	case strings.HasSuffix(key, "listen"):
		return "HOST:PORT"
	}
	return "PORT"
}
