package engine

import (
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"gopkg.in/yaml.v3"

	"github.com/kproxy/kproxy/internal/config"
)

// AdminHandler serves /healthz (the process is up), /readyz (listeners are
// bound and upstream metadata was fetched), /metrics from gatherer,
// /brokers (every upstream node, as JSON), /config (the configuration in
// force, secrets redacted, as YAML) and, with admin.pprof, /debug/pprof/.
func (s *Server) AdminHandler(gatherer prometheus.Gatherer) http.Handler {
	return adminHandler(gatherer, s.runningConfig, []*Server{s}, s.serveBrokers)
}

// VirtualClustersAdminHandler is AdminHandler for one process serving
// servers, one per virtual cluster (each built WithVirtualCluster):
// /readyz is ready once every one is, /brokers is an object of each
// virtual cluster's brokers by its name, and /config serves running (the
// whole file).
func VirtualClustersAdminHandler(gatherer prometheus.Gatherer, running func() *config.Config, servers []*Server) http.Handler {
	brokers := func(w http.ResponseWriter, _ *http.Request) {
		byName := make(map[string][]BrokerStatus, len(servers))
		for _, s := range servers {
			byName[s.virtualCluster] = s.Brokers()
		}
		writeJSON(w, map[string]any{"virtual_clusters": byName})
	}
	return adminHandler(gatherer, running, servers, brokers)
}

func adminHandler(gatherer prometheus.Gatherer, running func() *config.Config, servers []*Server, brokers http.HandlerFunc) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		for _, s := range servers {
			if !s.Ready() {
				http.Error(w, "not ready: upstream metadata not fetched yet or shutting down"+s.virtualClusterSuffix(), http.StatusServiceUnavailable)
				return
			}
		}
		w.Write([]byte("ready\n"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /brokers", brokers)
	mux.HandleFunc("GET /config", func(w http.ResponseWriter, _ *http.Request) { serveConfig(w, running()) })
	if running().Admin.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// WithRunningConfig says where /config finds the configuration in force
// (the last one a reload applied); by default it is the one New was given.
func WithRunningConfig(running func() *config.Config) Option {
	return func(s *Server) { s.runningConfig = running }
}

func serveConfig(w http.ResponseWriter, cfg *config.Config) {
	out, err := yaml.Marshal(cfg.Redacted())
	if err != nil {
		http.Error(w, "encode configuration: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(out)
}
