package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/policy"
	"github.com/kproxy/kproxy/internal/proxy"
	"github.com/kproxy/kproxy/internal/upstreamclient"
)

// reloadPoll is how often the configuration file is checked for changes.
const reloadPoll = time.Second

// policyWiring runs the policy feature: the enforcer the proxy filters
// requests through (when the file has a policy section), and the reloads
// that SIGHUP and changes to the file trigger.
type policyWiring struct {
	enf      *policy.Enforcer // nil without a policy section at start
	reloader *policy.Reloader
	hup      chan os.Signal
	upstream *kgo.Client // resolves topic ids the enforcer has not seen; nil: none
}

// startPolicy builds the enforcer from cfg and starts listening for SIGHUP
// (always: without a handler SIGHUP would kill the process). running is the
// file's configuration as loaded, before kproxy amended it.
func startPolicy(cfg, running *config.Config, path string, log zerolog.Logger, reg prometheus.Registerer) (*policyWiring, error) {
	w := &policyWiring{hup: make(chan os.Signal, 1)}
	for _, warning := range cfg.PolicyWarnings() {
		log.Warn().Str("warning", warning).Msg("policy rule a client can sidestep")
	}
	if cfg.Policy != nil {
		opts := []policy.Option{policy.WithLogger(log), policy.WithRegisterer(reg)}
		if canAskUpstream(cfg) {
			cl, err := upstreamclient.New(cfg.Upstream)
			if err != nil {
				return nil, err
			}
			w.upstream = cl
			opts = append(opts, policy.WithTopicResolver(cl))
		}
		enf, err := policy.New(cfg.Policy, cfg.Audit, opts...)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		w.enf = enf
		_, desc := enf.Active()
		log.Info().Str("policy", desc).Msg("policy in force; SIGHUP or a change to the configuration file reloads it")
	}
	w.reloader = policy.NewReloader(path, running, w.enf, log)
	signal.Notify(w.hup, syscall.SIGHUP)
	return w, nil
}

// options plugs the enforcer into the proxy.
func (w *policyWiring) options() []proxy.Option {
	if w.enf == nil {
		return nil
	}
	return []proxy.Option{proxy.WithRequestFilters(w.enf)}
}

// run reloads on SIGHUP and on file changes until ctx ends.
func (w *policyWiring) run(ctx context.Context) {
	go w.reloader.Watch(ctx, reloadPoll)
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.hup:
			w.reloader.Reload("sighup")
		}
	}
}

// close stops SIGHUP handling and flushes the audit log.
func (w *policyWiring) close() {
	signal.Stop(w.hup)
	if w.enf != nil {
		w.enf.Close()
	}
	if w.upstream != nil {
		w.upstream.Close()
	}
}

// canAskUpstream reports whether kproxy has its own way into the cluster:
// in SASL passthrough mode without upstream.sasl only clients hold
// credentials, and a topic id not seen here stays UNKNOWN_TOPIC_ID.
func canAskUpstream(cfg *config.Config) bool {
	sa := cfg.Listeners.SASL
	return sa == nil || sa.Mode != config.SASLModePassthrough || cfg.Upstream.SASL != nil
}
