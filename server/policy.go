package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/internal/tenant"
	"github.com/kproxy/kproxy/internal/upstreamclient"
	"github.com/kproxy/kproxy/policy"
	"github.com/kproxy/kproxy/policy/policyconfig"
	"github.com/kproxy/kproxy/proxy"
)

// reloadPoll is how often the configuration file is checked for changes.
const reloadPoll = time.Second

// policySource is where reloads come from: the file (with the overrides
// it was loaded with) and the program's reload requests.
type policySource struct {
	path      string
	overrides []config.Override
	reload    <-chan os.Signal // nil: only file changes reload
	plugins   []filter.Plugin  // decode the filters' sections of each reload
}

// policyWiring runs the policy feature: the enforcer each cluster (the
// file, or each virtual cluster) filters requests through when it has a
// policy at start, and the reloads that a reload request and changes to
// the file trigger, which re-read every cluster's policy.
type policyWiring struct {
	enfs     []*policy.Enforcer // by cluster, as cfg.Clusters() lists them; nil: no policy at start
	reloader *config.Reloader
	reload   <-chan os.Signal
	// upstreams are kproxy's own clients of each cluster's upstream (nil
	// where it has none, see canAskUpstream): they resolve topic ids an
	// enforcer or a name mapper has not seen.
	upstreams []*kgo.Client
	// names are each cluster's name mapper (nil without virtual_clusters).
	names   []*tenant.Mapper
	applied *countedApplier
	// auditFile is the audit.output file every virtual cluster's enforcer
	// writes to, opened once so that their lines do not interleave.
	auditFile *os.File
	// quotas are each cluster's quota engine, from its policy's quotas.
	quotas []*quota.Engine
	// auditLogs write the throttle lines of clusters without an enforcer.
	auditLogs []*policy.AuditLog
}

// startPolicy builds the enforcers from cfg. running is the file's
// configuration as loaded, before kproxy amended it.
func startPolicy(cfg, running *config.Config, src policySource, sections *sectionFilters, log zerolog.Logger, reg prometheus.Registerer) (_ *policyWiring, err error) {
	// w, not the named result: an early "return nil, err" sets the result
	// to nil before this deferred close runs.
	w := &policyWiring{reload: src.reload}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	for _, warning := range cfg.PolicyWarnings() {
		log.Warn().Str("warning", warning).Msg("configuration a client can sidestep (kproxy validate lists these)")
	}
	clusters := cfg.Clusters()
	appliers := make(map[string]config.Applier, len(clusters))
	for i, cl := range clusters {
		var upstream *kgo.Client // needed by a policy or a name mapper
		if (cl.Config.Policy != nil || cl.Name != "") && canAskUpstream(cl.Config) {
			if upstream, err = upstreamclient.New(cl.Config.Upstream); err != nil {
				return nil, err
			}
		}
		w.upstreams = append(w.upstreams, upstream)
		names := newNameMapper(cl, upstream)
		w.names = append(w.names, names)
		var resolver policy.Requester
		switch {
		case upstream == nil:
		case names != nil:
			resolver = tenantRequester{upstream: upstream, names: names}
		default:
			resolver = upstream
		}
		enf, err := w.startEnforcer(cl, resolver, clusterLogger(log, cl.Name), clusterRegisterer(reg, cl.Name))
		if err != nil {
			return nil, err
		}
		w.enfs = append(w.enfs, enf)
		auditor, err := w.quotaAuditor(cl, enf, clusterRegisterer(reg, cl.Name))
		if err != nil {
			return nil, err
		}
		quotas, err := quota.New(cl.Config.Policy, policy.QuotaMatcher, clusterRegisterer(reg, cl.Name), auditor)
		if err != nil {
			return nil, fmt.Errorf("policy.quotas: %w", err)
		}
		if n := quotas.Active(); n > 0 {
			clog := clusterLogger(log, cl.Name)
			clog.Info().Int("quotas", n).Msg("quotas in force")
		}
		w.quotas = append(w.quotas, quotas)
		appliers[cl.Name] = sections.reloader(i, quotaReloader{policy.ClusterReloadApplier(enf, cl.Name), quotas})
	}
	w.applied = newCountedApplier(clustersApplier(appliers), cfg, newConfigMetrics(reg, cfg))
	w.reloader = config.NewReloader(src.path, running, w.applied, log, src.overrides...).WithFilters(src.plugins)
	return w, nil
}

// startEnforcer builds cl's enforcer, nil when it has no policy; upstream
// (nil: none) resolves topic ids.
func (w *policyWiring) startEnforcer(cl config.Cluster, upstream policy.Requester, log zerolog.Logger, reg prometheus.Registerer) (*policy.Enforcer, error) {
	cfg := cl.Config
	authorizes := cfg.Policy.Authorizes() // nil: no policy, or quotas alone
	if authorizes == nil {
		return nil, nil
	}
	opts := []policy.Option{policy.WithLogger(log), policy.WithRegisterer(reg)}
	if upstream != nil {
		opts = append(opts, policy.WithTopicResolver(upstream))
	}
	if cl.Name != "" {
		out, err := w.sharedAuditOutput(cfg.Audit)
		if err != nil {
			return nil, err
		}
		if out != nil {
			opts = append(opts, policy.WithAuditWriter(out))
		}
	}
	enf, err := policy.New(authorizes, cfg.Audit, opts...)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	_, desc := enf.Active()
	log.Info().Str("policy", desc).Msg("policy in force; SIGHUP or a change to the configuration file reloads it")
	return enf, nil
}

// quotaAuditor is where cl's quota engine writes its throttle lines: the
// enforcer's audit log, or, for a cluster without one, an audit log of
// its own on the same audit.output (started by its first line).
func (w *policyWiring) quotaAuditor(cl config.Cluster, enf *policy.Enforcer, reg prometheus.Registerer) (quota.Auditor, error) {
	if enf != nil {
		return enf, nil
	}
	opts := []policy.Option{policy.WithRegisterer(reg)}
	if cl.Name != "" {
		out, err := w.sharedAuditOutput(cl.Config.Audit)
		if err != nil {
			return nil, err
		}
		if out != nil {
			opts = append(opts, policy.WithAuditWriter(out))
		}
	}
	a, err := policy.NewAuditLog(cl.Config.Audit, opts...)
	if err != nil {
		return nil, err
	}
	w.auditLogs = append(w.auditLogs, a)
	return a, nil
}

// sharedAuditOutput opens audit.output once for every virtual cluster's
// enforcer; nil when it is standard output, which each writes to itself.
func (w *policyWiring) sharedAuditOutput(a *policyconfig.Audit) (*os.File, error) {
	if a == nil || a.Output == "" || a.Output == policyconfig.AuditStdout {
		return nil, nil
	}
	if w.auditFile == nil {
		f, err := os.OpenFile(a.Output, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			return nil, fmt.Errorf("audit.output: %w", err)
		}
		w.auditFile = f
	}
	return w.auditFile, nil
}

// clustersApplier hands each cluster's reloaded configuration to its
// applier (by virtual cluster name; "" for a file without
// virtual_clusters). A cluster added or removed needs a restart, which
// the Reloader logs.
type clustersApplier map[string]config.Applier

func (c clustersApplier) ApplyConfig(cfg *config.Config, log zerolog.Logger) error {
	var errs []error
	for _, cl := range cfg.Clusters() {
		if a, ok := c[cl.Name]; ok {
			errs = append(errs, a.ApplyConfig(cl.Config, clusterLogger(log, cl.Name)))
		}
	}
	return errors.Join(errs...)
}

func (c clustersApplier) ConfigRejected(err error) {
	for _, a := range c {
		a.ConfigRejected(err)
	}
}

// inForce is the configuration kproxy runs with: as it started, with the
// sections a reload applies (policy, audit) from the last applied reload.
func (w *policyWiring) inForce() *config.Config { return w.applied.inForce.Load() }

// countedApplier counts reloads in the configuration metrics and keeps
// the configuration in force, for /config.
type countedApplier struct {
	config.Applier
	started *config.Config
	metrics *configMetrics
	inForce atomic.Pointer[config.Config]
}

func newCountedApplier(a config.Applier, started *config.Config, m *configMetrics) *countedApplier {
	c := &countedApplier{Applier: a, started: started, metrics: m}
	c.inForce.Store(started)
	return c
}

func (c *countedApplier) ApplyConfig(cfg *config.Config, log zerolog.Logger) error {
	running := *c.started
	running.Policy, running.Audit = cfg.Policy, cfg.Audit
	running.VirtualClusters = withPolicies(c.started.VirtualClusters, cfg.VirtualClusters)
	// In force before the appliers log that it is, so that whoever reads
	// "policy reloaded" and asks /config or /policy/explain gets it; put
	// back if an applier refuses it.
	previous := c.inForce.Swap(&running)
	err := c.Applier.ApplyConfig(cfg, log)
	if err != nil {
		c.inForce.Store(previous)
		c.metrics.reloaded(cfg, err)
		return err
	}
	c.metrics.reloaded(&running, nil)
	return nil
}

// withPolicies is started's virtual clusters with the policies of the
// same-named ones in reloaded.
func withPolicies(started, reloaded []config.VirtualCluster) []config.VirtualCluster {
	if started == nil {
		return nil
	}
	out := slices.Clone(started)
	for i := range out {
		for _, r := range reloaded {
			if r.Name == out[i].Name {
				out[i].Policy = r.Policy
			}
		}
	}
	return out
}

func (c *countedApplier) ConfigRejected(err error) {
	c.Applier.ConfigRejected(err)
	c.metrics.reloaded(nil, err)
}

// options plugs cluster i's quotas and enforcer into its proxy, ahead of
// the program's filters: a request is authorized before anything else
// looks at it.
func (w *policyWiring) options(i int) []proxy.Option {
	opts := []proxy.Option{proxy.WithQuotas(w.quotas[i])}
	if w.enfs[i] == nil {
		return opts
	}
	return append(opts, proxy.WithFilters(w.enfs[i]))
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

// close flushes the audit logs and closes the topic id resolvers' clients.
func (w *policyWiring) close() {
	for _, enf := range w.enfs {
		if enf != nil {
			enf.Close()
		}
	}
	for _, a := range w.auditLogs {
		a.Close()
	}
	if w.auditFile != nil {
		w.auditFile.Close()
	}
	for _, cl := range w.upstreams {
		if cl != nil {
			cl.Close()
		}
	}
}

// canAskUpstream reports whether kproxy has its own way into the cluster:
// in SASL passthrough mode without upstream.sasl only clients hold
// credentials, and a topic id not seen here stays UNKNOWN_TOPIC_ID.
func canAskUpstream(cfg *config.Config) bool {
	sa := cfg.Listeners.SASL
	return sa == nil || sa.Mode != config.SASLModePassthrough || cfg.Upstream.SASL != nil
}
