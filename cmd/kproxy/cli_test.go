package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
)

// runArgs runs the kproxy command with args and no environment.
func runArgs(args []string, stdout, stderr io.Writer) int {
	return runEnv(context.Background(), args, nil, stdout, stderr)
}

// runEnv runs the kproxy command with args and the environment env.
func runEnv(ctx context.Context, args []string, env map[string]string, stdout, stderr io.Writer) int {
	return run(ctx, args, cli{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr,
		getenv: func(k string) string { return env[k] }})
}

// TestHelpListsEveryCommandAndFlag: kproxy --help (and -h, and help)
// names each subcommand and each of its flags (in name order) on a line
// of its own.
func TestHelpListsEveryCommandAndFlag(t *testing.T) {
	configFlags := []string{"--admin-listen HOST:PORT", "--advertised-host HOST", "--bind-host HOST", "--bootstrap-port PORT", "--broker-port-base PORT", "--config FILE"}
	want := map[string][]string{
		"run":           configFlags,
		"validate":      append(slices.Clone(configFlags), "--skip-file-checks"),
		"version":       nil,
		"hash-password": {"--iterations N", "--mechanism MECHANISMS"},
		"config":        nil,
		"policy explain": {"--claim NAME=VALUE", "--client-id ID", "--cluster", "--cn NAME", "--config FILE", "--group NAME", "--host IP",
			"--listener NAME", "--operation OP", "--output FORMAT", "--principal User:NAME", "--topic NAME", "--transactional-id ID", "--virtual-cluster NAME"},
		"policy diff": {"--output FORMAT"},
		"probe":       {"--timeout DURATION"},
	}
	envs := []string{"KPROXY_BIND_HOST", "KPROXY_ADVERTISED_HOST", "KPROXY_BOOTSTRAP_PORT", "KPROXY_BROKER_PORT_BASE", "KPROXY_ADMIN_LISTEN"}
	for _, arg := range []string{"--help", "-h", "help"} {
		var stdout, stderr bytes.Buffer
		if code := runArgs([]string{arg}, &stdout, &stderr); code != 0 || stderr.Len() > 0 {
			t.Fatalf("%s: exit %d, stderr %q", arg, code, stderr.String())
		}
		// Split the help into each command's section: its line, then its flags.
		sections := map[string][]string{}
		var current string
		for _, line := range strings.Split(stdout.String(), "\n") {
			fields := strings.Fields(line)
			if len(fields) > 1 && strings.HasPrefix(line, "  ") && !strings.HasPrefix(fields[0], "--") {
				if _, ok := want[fields[0]]; ok {
					current = fields[0]
					continue
				}
				if _, ok := want[fields[0]+" "+fields[1]]; ok { // a command of two words
					current = fields[0] + " " + fields[1]
					continue
				}
			}
			if current != "" && len(fields) > 1 && strings.HasPrefix(fields[0], "--") {
				sections[current] = append(sections[current], line)
			}
		}
		for cmd, flags := range want {
			if len(sections[cmd]) != len(flags) {
				t.Errorf("%s: %s has %d flag lines, want %d: %q", arg, cmd, len(sections[cmd]), len(flags), sections[cmd])
				continue
			}
			for i, flag := range flags {
				if !strings.HasPrefix(strings.TrimSpace(sections[cmd][i]), flag) {
					t.Errorf("%s: %s flag line %d is %q, want %s", arg, cmd, i, sections[cmd][i], flag)
				}
			}
		}
		for _, env := range envs {
			if !strings.Contains(stdout.String(), env) {
				t.Errorf("%s: help does not name %s", arg, env)
			}
		}
	}
}

// TestUnknownCommandAndMissingConfig: bad usage exits 2 and says why.
func TestUnknownCommandAndMissingConfig(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"serve"}, `unknown command "serve"`},
		{nil, "want --config FILE"},
		{[]string{"run", "--config", "x.yaml", "extra"}, "no arguments"},
		{[]string{"version", "extra"}, "usage: kproxy version"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runArgs(tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.says) {
			t.Errorf("%q: exit %d, stderr %q; want 2 saying %q", tc.args, code, stderr.String(), tc.says)
		}
	}
}
