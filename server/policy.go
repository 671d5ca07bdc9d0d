package server

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/policy"
	"github.com/kproxy/kproxy/internal/proxy"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/internal/upstreamclient"
)

// reloadPoll is how often the configuration file is checked for changes.
const reloadPoll = time.Second

// policySource is where reloads come from: the file (with the overrides
// it was loaded with) and the program's reload requests.
type policySource struct {
	path      string
	overrides []config.Override
	reload    <-chan os.Signal // nil: only file changes reload
}

// policyWiring runs the policy feature: the enforcer the proxy filters
// requests through (when the file has a policy section), and the reloads
// that a reload request and changes to the file trigger.
type policyWiring struct {
	enf      *policy.Enforcer // nil without a policy section at start
	reloader *config.Reloader
	reload   <-chan os.Signal
	upstream *kgo.Client // resolves topic ids the enforcer has not seen; nil: none
	applied  *countedApplier
	quotas   *quota.Engine
}

// startPolicy builds the enforcer from cfg. running is the file's
// configuration as loaded, before kproxy amended it.
func startPolicy(cfg, running *config.Config, src policySource, log zerolog.Logger, reg prometheus.Registerer) (*policyWiring, error) {
	w := &policyWiring{reload: src.reload}
	for _, warning := range cfg.PolicyWarnings() {
		log.Warn().Str("warning", warning).Msg("policy rule a client can sidestep")
	}
	if authorizes := cfg.Policy.Authorizes(); authorizes != nil {
		opts := []policy.Option{policy.WithLogger(log), policy.WithRegisterer(reg)}
		if canAskUpstream(cfg) {
			cl, err := upstreamclient.New(cfg.Upstream)
			if err != nil {
				return nil, err
			}
			w.upstream = cl
			opts = append(opts, policy.WithTopicResolver(cl))
		}
		enf, err := policy.New(authorizes, cfg.Audit, opts...)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		w.enf = enf
		_, desc := enf.Active()
		log.Info().Str("policy", desc).Msg("policy in force; SIGHUP or a change to the configuration file reloads it")
	}
	quotas, err := quota.New(cfg.Policy, policy.QuotaMatcher, reg, log)
	if err != nil {
		return nil, fmt.Errorf("policy.quotas: %w", err)
	}
	w.quotas = quotas
	if n := quotas.Active(); n > 0 {
		log.Info().Int("quotas", n).Msg("quotas in force")
	}
	w.applied = newCountedApplier(quotaReloader{policy.ReloadApplier(w.enf), quotas}, cfg, proxy.NewConfigMetrics(reg, cfg))
	w.reloader = config.NewReloader(src.path, running, w.applied, log, src.overrides...)
	return w, nil
}

// inForce is the configuration kproxy runs with: as it started, with the
// sections a reload applies (policy, audit) from the last applied reload.
func (w *policyWiring) inForce() *config.Config { return w.applied.inForce.Load() }

// countedApplier counts reloads in the configuration metrics and keeps
// the configuration in force, for /config.
type countedApplier struct {
	config.Applier
	started *config.Config
	metrics *proxy.ConfigMetrics
	inForce atomic.Pointer[config.Config]
}

func newCountedApplier(a config.Applier, started *config.Config, m *proxy.ConfigMetrics) *countedApplier {
	c := &countedApplier{Applier: a, started: started, metrics: m}
	c.inForce.Store(started)
	return c
}

func (c *countedApplier) ApplyConfig(cfg *config.Config, log zerolog.Logger) error {
	err := c.Applier.ApplyConfig(cfg, log)
	if err == nil {
		running := *c.started
		running.Policy, running.Audit = cfg.Policy, cfg.Audit
		c.inForce.Store(&running)
		cfg = &running
	}
	c.metrics.Reloaded(cfg, err)
	return err
}

func (c *countedApplier) ConfigRejected(err error) {
	c.Applier.ConfigRejected(err)
	c.metrics.Reloaded(nil, err)
}

// options plugs the enforcer into the proxy, ahead of the program's
// filters: a request is authorized before anything else looks at it.
func (w *policyWiring) options() []proxy.Option {
	opts := []proxy.Option{proxy.WithQuotas(w.quotas)}
	if w.enf == nil {
		return opts
	}
	return append(opts, proxy.WithFilters(w.enf))
}

// quotaReloader applies a reloaded file's quotas once the policy applier
// accepted the file: both change together or neither does.
type quotaReloader struct {
	config.Applier
	quotas *quota.Engine
}

func (q quotaReloader) ApplyConfig(cfg *config.Config, log zerolog.Logger) error {
	if err := q.Applier.ApplyConfig(cfg, log); err != nil {
		return err
	}
	if err := q.quotas.Reload(cfg.Policy); err != nil {
		log.Error().Err(err).Msg("quota reload rejected; the quotas in force stay")
		return err
	}
	log.Info().Int("quotas", q.quotas.Active()).Msg("quotas reloaded; apply to the next request on every connection")
	return nil
}

// run reloads on each reload request and on file changes until ctx ends.
func (w *policyWiring) run(ctx context.Context) {
	go w.reloader.Watch(ctx, reloadPoll)
	for {
		select {
		case <-ctx.Done():
			return
		case sig := <-w.reload: // a nil channel never receives
			w.reloader.Reload(reloadTrigger(sig))
		}
	}
}

// reloadTrigger names a reload request in the log: "sighup" for SIGHUP.
func reloadTrigger(sig os.Signal) string {
	if sig == nil {
		return "reload request"
	}
	if sig == syscall.SIGHUP {
		return "sighup"
	}
	return "signal " + sig.String()
}

// close flushes the audit log and closes the topic id resolver's client.
func (w *policyWiring) close() {
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
