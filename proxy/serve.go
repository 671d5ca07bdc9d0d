package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/embedded"
	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/labels"
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
		out = zerolog.ConsoleWriter{Out: out, TimeFormat: time.RFC3339, NoColor: !isTerminal(out)}
	}
	return zerolog.New(out).Level(level).With().Timestamp().Logger()
}

// isTerminal reports whether w is a terminal: colours are for people
// watching one, and are escape codes in a file or a log collector.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
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
	built, err := buildClusterFilters(cfg, opts.Plugins, log, reg)
	if err != nil {
		return err
	}
	defer built.close()
	pol := startReloads(cfg, &running, policySource{opts.ConfigPath, overrides, opts.Reload, built.plugins}, built, log, reg)
	tracer, err := startTracing(cfg.Tracing, reg, log)
	if err != nil {
		return err
	}
	defer tracer.stop()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	servers, err := startClusters(ctx, cfg, pol, built, opts, tracer, log, reg)
	if err != nil {
		return err
	}
	shutdown := func(ctx context.Context) error { return shutdownAll(ctx, servers) }
	go pol.run(ctx)
	var handler http.Handler
	if len(cfg.VirtualClusters) == 0 {
		handler = servers[0].AdminHandler(reg)
	} else {
		handler = engine.VirtualClustersAdminHandler(reg, pol.inForce, servers)
	}
	handler = withPolicyExplain(handler, pol.inForce)
	// The admin endpoint's accept errors are counted and logged as the
	// first cluster's listeners' are (listener "admin").
	admin, err := serveAdmin(cfg.Admin, handler, log, servers[0].RetryAccept)
	if err != nil {
		shutdown(context.Background())
		return err
	}
	if opts.Started != nil {
		opts.Started(newStarted(cfg, servers, adminAddr(admin), reg))
	}

	failed := startFailure(ctx, cfg, servers)
	if failed != nil {
		log.Error().Err(failed).Msg("start-up failed; shutting down")
	} else {
		log.Info().Str("timeout", cfg.Limits.ShutdownTimeout.String()).Msg("shutting down: draining in-flight requests")
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.Limits.ShutdownTimeout)
	defer cancel()
	err = shutdown(shutdownCtx)
	if admin != nil {
		admin.Shutdown(shutdownCtx)
	}
	if failed != nil {
		return errors.Join(failed, err)
	}
	if err != nil {
		return err
	}
	log.Info().Msg("shut down cleanly")
	return nil
}

// startFailure waits until ctx ends (nil) or a server's start-up fails
// after it began serving (that error, naming the virtual cluster).
func startFailure(ctx context.Context, cfg *config.Config, servers []*engine.Server) error {
	failed := make(chan error, len(servers))
	clusters := cfg.Clusters()
	for i, srv := range servers {
		name := clusters[i].Name
		go func() {
			select {
			case err := <-srv.Failed():
				if name != "" {
					err = fmt.Errorf("virtual cluster %s (virtual_clusters[%d]): %w", name, i, err)
				}
				failed <- err
			case <-ctx.Done():
			}
		}()
	}
	select {
	case err := <-failed:
		return err
	case <-ctx.Done():
		return nil
	}
}

// serveAdmin serves the admin endpoint (engine.Server.AdminHandler) when admin.listen is
// set; the caller shuts the server down. retry wraps its listener so that
// accept errors (file descriptors used up) are retried, counted and logged
// instead of ending the endpoint.
func serveAdmin(cfg config.Admin, h http.Handler, log zerolog.Logger, retry func(net.Listener, string) net.Listener) (*http.Server, error) {
	if cfg.Listen == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("admin.listen: admin listener on %s: %w", cfg.Listen, err)
	}
	ln = retry(ln, "admin")
	// Addr records the bound address (Started.AdminAddr); Serve uses ln.
	admin := &http.Server{Addr: ln.Addr().String(), Handler: withRequestDeadlines(h),
		ReadHeaderTimeout: adminHeaderTimeout, IdleTimeout: adminHeaderTimeout}
	log.Info().Str("addr", ln.Addr().String()).Bool("pprof", cfg.Pprof).Msg("admin endpoint listening (/healthz, /readyz, /metrics, /brokers, /config, /policy/explain)")
	go func() {
		if err := admin.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("admin endpoint stopped")
		}
	}()
	return admin, nil
}

// startClusters builds and starts one engine per cluster cfg serves (the
// file, or each virtual cluster), each with its own policy, listeners and
// upstream, sharing the tracer, the program's filters and the registry;
// built are the filters built from the clusters' sections.
func startClusters(ctx context.Context, cfg *config.Config, pol *reloads, built *clusterFilters, opts Options, tracer *requestTracing,
	log zerolog.Logger, reg prometheus.Registerer) ([]*engine.Server, error) {
	clusters := cfg.Clusters()
	registerBuildInfo(reg, opts.Version, opts.Commit) // once, unlabelled
	connIDs := new(atomic.Uint64)
	var servers []*engine.Server
	for i, cl := range clusters {
		proxyOpts := append(tracer.options(), engine.WithFilters(built.sections.filters(i, opts.Filters)...),
			engine.WithRunningConfig(pol.inForce))
		naming, err := nameMapping(built.upstreams.names[i], cl)
		if err != nil {
			shutdownAll(context.Background(), servers)
			return nil, err
		}
		proxyOpts = append(proxyOpts, naming...)
		if cl.Name != "" {
			proxyOpts = append(proxyOpts, engine.WithVirtualCluster(cl.Name, connIDs))
		}
		srv := engine.New(cl.Config, clusterLogger(log, cl.Name), clusterRegisterer(reg, cl.Name), proxyOpts...)
		if err := srv.Start(ctx); err != nil {
			shutdownAll(context.Background(), servers)
			if cl.Name != "" {
				err = fmt.Errorf("virtual cluster %s (virtual_clusters[%d]): %w", cl.Name, i, err)
			}
			return nil, err
		}
		servers = append(servers, srv)
	}
	return servers, nil
}

// virtualClusterLabel labels every series of a virtual cluster's engine,
// and is the field naming it in log lines.
const virtualClusterLabel = labels.VirtualCluster

// clusterLogger is log with the virtual cluster's name in every line; log
// itself for a file without virtual_clusters.
func clusterLogger(log zerolog.Logger, name string) zerolog.Logger {
	if name == "" {
		return log
	}
	return log.With().Str(virtualClusterLabel, name).Logger()
}

// clusterRegisterer labels the virtual cluster's series, so that the
// virtual clusters of one process share one registry without their series
// colliding; reg itself for
// a file without virtual_clusters, whose series stay as they always were.
func clusterRegisterer(reg prometheus.Registerer, name string) prometheus.Registerer {
	if name == "" {
		return reg
	}
	return prometheus.WrapRegistererWith(prometheus.Labels{virtualClusterLabel: name}, reg)
}

// shutdownAll drains every server at once, within ctx.
func shutdownAll(ctx context.Context, servers []*engine.Server) error {
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = srv.Shutdown(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
