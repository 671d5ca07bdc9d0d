// Command kproxy runs the transparent Kafka proxy.
//
//	kproxy --config FILE           run the proxy
//	kproxy validate --config FILE  check a configuration file and exit
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

	"github.com/kproxy/kproxy/config"
	"github.com/kproxy/kproxy/embedded"
	"github.com/kproxy/kproxy/proxy"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "validate" {
		return validate(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("kproxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "path to the YAML configuration file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: kproxy --config FILE | kproxy validate --config FILE")
		return 2
	}
	cfg, err := config.Load(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	log := newLogger(cfg.Log, stdout)
	if err := serve(cfg, log); err != nil {
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
	if _, err := config.Load(*path); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
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

// serve runs kproxy until SIGTERM or SIGINT, then drains it.
func serve(cfg *config.Config, log zerolog.Logger) error {
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
	srv := proxy.New(cfg, log, reg)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		return err
	}

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
	log.Info().Dur("timeout", cfg.Limits.ShutdownTimeout).Msg("shutting down: draining in-flight requests")
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
