package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kproxy/kproxy/internal/auth"
)

// maxPasswordLine bounds what hash-password reads from stdin.
const maxPasswordLine = 4096

// hashPasswordCommand is `kproxy hash-password`: it prints a salted SCRAM
// credential for a password read from standard input. The credential
// math is internal/auth's.
func hashPasswordCommand() command {
	return command{
		name:    "hash-password",
		summary: "print salted SCRAM credentials (for listeners.sasl.users) for a password read from stdin",
		usage: `kproxy hash-password [--mechanism M[,M]] [--iterations N] < password-file

Reads a password from the first line of standard input (no prompt; the line
ending is removed) and prints one salted credential per mechanism, for
listeners.sasl.users[].credentials. The password itself is never stored.

  printf '%s\n' "$PASSWORD" | kproxy hash-password --mechanism SCRAM-SHA-256,SCRAM-SHA-512
`,
		setup: func(fs *flag.FlagSet, c cli) func(context.Context, []string) int {
			mechs := fs.String("mechanism", auth.ScramSHA512, "comma-separated SCRAM `MECHANISMS`: SCRAM-SHA-256, SCRAM-SHA-512")
			iterations := fs.Int("iterations", auth.DefaultIterations, fmt.Sprintf("PBKDF2 iterations, `N` (%d-%d)", auth.MinIterations, auth.MaxIterations))
			return func(_ context.Context, args []string) int {
				if len(args) > 0 {
					fmt.Fprintln(c.stderr, "kproxy hash-password: the password is read from standard input, not from arguments")
					fs.Usage()
					return 2
				}
				return hashPassword(*mechs, *iterations, c)
			}
		},
	}
}

// hashPassword prints a credential per mechanism in mechs; it returns the
// exit code: 0 on success, 2 for bad usage, 1 for any other failure.
func hashPassword(mechs string, iterations int, c cli) int {
	var list []string
	for _, m := range strings.Split(mechs, ",") {
		m = strings.TrimSpace(m)
		if !auth.IsScram(m) {
			fmt.Fprintf(c.stderr, "kproxy hash-password: mechanism %q: want %s or %s\n", m, auth.ScramSHA256, auth.ScramSHA512)
			return 2
		}
		list = append(list, m)
	}
	if iterations < auth.MinIterations || iterations > auth.MaxIterations {
		fmt.Fprintf(c.stderr, "kproxy hash-password: --iterations %d: want %d-%d\n", iterations, auth.MinIterations, auth.MaxIterations)
		return 2
	}
	password, err := readPasswordLine(c.stdin)
	if err != nil {
		fmt.Fprintf(c.stderr, "kproxy hash-password: %v\n", err)
		return 1
	}
	for _, m := range list {
		cred, err := auth.HashPassword(m, password, iterations)
		if err != nil {
			fmt.Fprintf(c.stderr, "kproxy hash-password: %v\n", err)
			return 1
		}
		fmt.Fprintln(c.stdout, cred)
	}
	return 0
}

// readPasswordLine reads the first line of r without its line ending.
func readPasswordLine(r io.Reader) (string, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, maxPasswordLine+2), maxPasswordLine+2)
	line, err := br.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from standard input: %w", err)
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if len(line) > maxPasswordLine {
		return "", fmt.Errorf("read password from standard input: longer than %d bytes", maxPasswordLine)
	}
	if line == "" {
		return "", errors.New("read password from standard input: empty password (pipe it in: printf '%s\\n' \"$PASSWORD\" | kproxy hash-password)")
	}
	return line, nil
}
