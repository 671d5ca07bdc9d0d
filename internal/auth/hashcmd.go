package auth

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// maxPasswordLine bounds what HashPasswordCommand reads from stdin.
const maxPasswordLine = 4096

const hashPasswordUsage = `usage: kproxy hash-password [--mechanism M[,M]] [--iterations N] < password-file

Reads a password from the first line of standard input (no prompt; the line
ending is removed) and prints one salted credential per mechanism, for
listeners.sasl.users[].credentials. The password itself is never stored.

  printf '%s\n' "$PASSWORD" | kproxy hash-password --mechanism SCRAM-SHA-256,SCRAM-SHA-512
`

// HashPasswordCommand is the `kproxy hash-password` subcommand: args are
// the arguments after the subcommand name. It returns the process exit
// code: 0 on success, 2 for bad usage, 1 for any other failure.
func HashPasswordCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kproxy hash-password", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		io.WriteString(stderr, hashPasswordUsage)
		fs.PrintDefaults()
	}
	mechs := fs.String("mechanism", ScramSHA512, "comma-separated SCRAM mechanisms: SCRAM-SHA-256, SCRAM-SHA-512")
	iterations := fs.Int("iterations", DefaultIterations, fmt.Sprintf("PBKDF2 iterations (%d-%d)", MinIterations, MaxIterations))
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "kproxy hash-password: the password is read from standard input, not from arguments")
		fs.Usage()
		return 2
	}
	var list []string
	for _, m := range strings.Split(*mechs, ",") {
		m = strings.TrimSpace(m)
		if !isScram(m) {
			fmt.Fprintf(stderr, "kproxy hash-password: mechanism %q: want %s or %s\n", m, ScramSHA256, ScramSHA512)
			return 2
		}
		list = append(list, m)
	}
	if *iterations < MinIterations || *iterations > MaxIterations {
		fmt.Fprintf(stderr, "kproxy hash-password: --iterations %d: want %d-%d\n", *iterations, MinIterations, MaxIterations)
		return 2
	}
	password, err := readPasswordLine(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "kproxy hash-password: %v\n", err)
		return 1
	}
	for _, m := range list {
		cred, err := HashPassword(m, password, *iterations)
		if err != nil {
			fmt.Fprintf(stderr, "kproxy hash-password: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, cred)
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
