package relay

import (
	"bufio"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Main is the body of a relay process (kproxy-bench's hidden "relay"
// subcommand):
//
//	relay --mode splice|copy --target HOST:PORT [--target HOST:PORT ...]
//	relay --mode tls --cert FILE --key FILE --target HOST:PORT [...]
//
// It opens one listener per target on 127.0.0.1 (any free port), prints one
// line "listen TARGET ADDR" per target and then "ready" on stdout, and
// relays until SIGTERM, SIGINT or the end of its standard input (so it dies
// with the process that started it).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	modeFlag := fs.String("mode", "splice", "splice, copy or tls")
	certFile := fs.String("cert", "", "tls mode: server certificate (PEM)")
	keyFile := fs.String("key", "", "tls mode: its private key (PEM)")
	host := fs.String("listen-host", "127.0.0.1", "host every listener binds")
	var targets multiFlag
	fs.Var(&targets, "target", "host:port to relay to; repeat for one listener per broker")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	mode, err := ParseMode(*modeFlag)
	if err != nil || len(targets) == 0 || (mode == TLS) != (*certFile != "" && *keyFile != "") {
		fmt.Fprintln(stderr, "usage: relay --mode splice|copy|tls [--cert FILE --key FILE (tls only)] --target HOST:PORT [--target ...]")
		return 2
	}
	var serverTLS *tls.Config
	if mode == TLS {
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			fmt.Fprintln(stderr, "relay:", err)
			return 1
		}
		serverTLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	var lns []net.Listener
	out := bufio.NewWriter(stdout)
	for _, t := range targets {
		ln, err := net.Listen("tcp", net.JoinHostPort(*host, "0"))
		if err != nil {
			fmt.Fprintln(stderr, "relay:", err)
			return 1
		}
		fmt.Fprintf(out, "listen %s %s\n", t, ln.Addr())
		if serverTLS != nil {
			ln = tls.NewListener(ln, serverTLS)
		}
		lns = append(lns, ln)
	}
	fmt.Fprintln(out, "ready")
	out.Flush()

	for i, ln := range lns {
		go func() {
			if err := Serve(ln, targets[i], mode); err != nil {
				fmt.Fprintln(stderr, "relay:", err)
			}
		}()
	}
	WaitForStop(stdin)
	for _, ln := range lns {
		ln.Close()
	}
	// Open pairs are not waited for: the process exits and the kernel
	// closes them.
	return 0
}

// WaitForStop returns on SIGTERM, SIGINT or the end of stdin: a child
// process's parent closes its standard input to stop it, and the pipe
// closes when the parent dies.
func WaitForStop(stdin io.Reader) {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(stop)
	go func() {
		io.Copy(io.Discard, stdin)
		stop <- syscall.SIGTERM
	}()
	<-stop
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
