package proxy

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
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.Ready() {
			http.Error(w, "not ready: upstream metadata not fetched yet or shutting down", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /brokers", s.serveBrokers)
	mux.HandleFunc("GET /config", s.serveConfig)
	if s.cfg.Admin.Pprof {
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

func (s *Server) serveConfig(w http.ResponseWriter, _ *http.Request) {
	out, err := yaml.Marshal(s.runningConfig().Redacted())
	if err != nil {
		http.Error(w, "encode configuration: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(out)
}
