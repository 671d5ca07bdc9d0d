// Command kproxy runs the transparent Kafka proxy.
//
//	kproxy --config FILE           run the proxy
//	kproxy validate --config FILE  check a configuration file and exit
//	kproxy hash-password           print a salted SCRAM credential for a password read from stdin
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/embedded"
	"github.com/kproxy/kproxy/internal/proxy"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "validate" {
		return validate(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "hash-password" {
		return auth.HashPasswordCommand(args[1:], os.Stdin, stdout, stderr)
	}
	fs := flag.NewFlagSet("kproxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "path to the YAML configuration file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: kproxy --config FILE | kproxy validate --config FILE | kproxy hash-password [--mechanism M] < password")
		return 2
	}
	cfg, err := config.Load(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	log := newLogger(cfg.Log, stdout)
	if err := serve(cfg, *path, log); err != nil {
		log.Error().Err(err).Msg("kproxy stopped")
		return 1
	}
	return 0
}

func validate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kproxy validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "path to the YAML configuration file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" {
		fmt.Fprintln(stderr, "usage: kproxy validate --config FILE")
		return 2
	}
	cfg, err := config.Load(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	// Warnings do not fail validation: the file is valid, and may mean it.
	for _, w := range cfg.PolicyWarnings() {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	fmt.Fprintf(stdout, "%s: ok\n", *path)
	return 0
}

func newLogger(cfg config.Log, out io.Writer) zerolog.Logger {
	level, _ := zerolog.ParseLevel(cfg.Level) // validated at load
	if cfg.Format == "console" {
		out = zerolog.ConsoleWriter{Out: out, TimeFormat: time.RFC3339}
	}
	return zerolog.New(out).Level(level).With().Timestamp().Logger()
}

// serve runs kproxy until SIGTERM or SIGINT, then drains it. path is the
// configuration file, re-read on SIGHUP and when it changes.
func serve(cfg *config.Config, path string, log zerolog.Logger) error {
	running := *cfg // as loaded, before the embedded cluster amends it
	if cfg.Upstream.Embedded != nil {
		cluster, addrs, err := embedded.Start(*cfg.Upstream.Embedded)
		if err != nil {
			return err
		}
		defer cluster.Close()
		cfg.Upstream.BootstrapServers = addrs
		log.Warn().Strs("brokers", addrs).Msg("embedded in-memory Kafka cluster started: for trying kproxy, not for production (data is lost on exit)")
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	pol, perr := startPolicy(cfg, &running, path, log, reg)
	if perr != nil {
		return perr
	}
	defer pol.close()
	srv := proxy.New(cfg, log, reg, pol.options()...)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		return err
	}
	go pol.run(ctx)

	var admin *http.Server
	if cfg.Admin.Listen != "" {
		ln, err := net.Listen("tcp", cfg.Admin.Listen)
		if err != nil {
			return fmt.Errorf("admin listener %s: %w", cfg.Admin.Listen, err)
		}
		admin = &http.Server{Handler: srv.AdminHandler(reg), ReadHeaderTimeout: 5 * time.Second}
		log.Info().Str("addr", ln.Addr().String()).Msg("admin endpoint listening (/healthz, /readyz, /metrics)")
		go func() {
			if err := admin.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error().Err(err).Msg("admin endpoint stopped")
			}
		}()
	}

	<-ctx.Done()
	log.Info().Str("timeout", cfg.Limits.ShutdownTimeout.String()).Msg("shutting down: draining in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.Limits.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if admin != nil {
		admin.Shutdown(shutdownCtx)
	}
	if err != nil {
		return err
	}
	log.Info().Msg("shut down cleanly")
	return nil
}
