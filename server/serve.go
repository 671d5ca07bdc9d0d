package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/embedded"
	"github.com/kproxy/kproxy/internal/proxy"
)

// logger is Options.Logger, or one built from the file's log section.
func (o Options) logger(cfg config.Log) zerolog.Logger {
	if o.Logger != nil {
		return *o.Logger
	}
	out := o.LogOutput
	if out == nil {
		out = os.Stdout
	}
	level, _ := zerolog.ParseLevel(cfg.Level) // validated at load
	if cfg.Format == "console" {
		out = zerolog.ConsoleWriter{Out: out, TimeFormat: time.RFC3339}
	}
	return zerolog.New(out).Level(level).With().Timestamp().Logger()
}

// serve runs kproxy from cfg, loaded from opts.ConfigPath with overrides,
// until ctx ends, then drains it.
func serve(ctx context.Context, cfg *config.Config, overrides []config.Override, opts Options) (err error) {
	log := opts.logger(cfg.Log)
	defer func() {
		if err != nil {
			log.Error().Err(err).Msg("kproxy stopped")
		}
	}()
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
	pol, err := startPolicy(cfg, &running, policySource{opts.ConfigPath, overrides, opts.Reload}, log, reg)
	if err != nil {
		return err
	}
	defer pol.close()
	tracer, err := startTracing(cfg.Tracing, reg, log)
	if err != nil {
		return err
	}
	defer tracer.stop()
	proxyOpts := append(append(pol.options(), tracer.options()...), proxy.WithFilters(opts.Filters...),
		proxy.WithBuildInfo(opts.Version, opts.Commit), proxy.WithRunningConfig(pol.inForce))
	srv := proxy.New(cfg, log, reg, proxyOpts...)

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		return err
	}
	go pol.run(ctx)
	admin, err := serveAdmin(cfg.Admin, srv.AdminHandler(reg), log)
	if err != nil {
		srv.Shutdown(context.Background())
		return err
	}

	<-ctx.Done()
	log.Info().Str("timeout", cfg.Limits.ShutdownTimeout.String()).Msg("shutting down: draining in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.Limits.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if admin != nil {
		admin.Shutdown(shutdownCtx)
	}
	if err != nil {
		return err
	}
	log.Info().Msg("shut down cleanly")
	return nil
}

// serveAdmin serves the admin endpoint (proxy.Server.AdminHandler) when admin.listen is
// set; the caller shuts the server down.
func serveAdmin(cfg config.Admin, h http.Handler, log zerolog.Logger) (*http.Server, error) {
	if cfg.Listen == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("admin listener %s: %w", cfg.Listen, err)
	}
	admin := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	log.Info().Str("addr", ln.Addr().String()).Bool("pprof", cfg.Pprof).Msg("admin endpoint listening (/healthz, /readyz, /metrics, /brokers, /config)")
	go func() {
		if err := admin.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("admin endpoint stopped")
		}
	}()
	return admin, nil
}
