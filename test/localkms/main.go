// Command local-kms serves local-kms (github.com/nsmithuk/local-kms), an
// implementation of the AWS KMS API, on one loopback address only, for
// kproxy's record-encryption tests. local-kms's own main listens on every
// interface; this one binds the address it is given and refuses any other
// than 127.0.0.0/8.
//
//	local-kms -addr 127.0.0.1:14566 [-data DIR] [-region eu-west-1]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	localkms "github.com/nsmithuk/local-kms/src"
	"github.com/nsmithuk/local-kms/src/config"
	"github.com/nsmithuk/local-kms/src/data"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "local-kms:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "", "loopback address to listen on, host:port with host in 127.0.0.0/8 (required)")
	dataDir := flag.String("data", "", "directory of the key database (default: a new temporary directory removed at exit)")
	region := flag.String("region", "eu-west-1", "region written into key ARNs")
	account := flag.String("account", "111122223333", "account id written into key ARNs")
	flag.Parse()

	if err := requireLoopback(*addr); err != nil {
		return err
	}
	dir := *dataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "local-kms-")
		if err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	// local-kms reads these package variables while handling requests.
	config.AWSRegion, config.AWSAccountId, config.DatabasePath = *region, *account, dir

	db := data.NewDatabase(dir)
	defer db.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { localkms.HandleRequest(w, r, db) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Fprintf(os.Stderr, "local-kms listening on %s, data in %s\n", ln.Addr(), dir)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// requireLoopback refuses an address whose host is not a 127.0.0.0/8 IP:
// the test KMS holds keys anyone reaching it could use.
func requireLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.To4() == nil || !ip.IsLoopback() {
		return fmt.Errorf("-addr %q: the host must be an address in 127.0.0.0/8", addr)
	}
	return nil
}
