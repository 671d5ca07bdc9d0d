package proxy

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

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/policy"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// reloadPoll is how often the configuration file is checked for changes.
const reloadPoll = time.Second

// policySource is where reloads come from: the file (with the overrides
// it was loaded with) and the program's reload requests.
type policySource struct {
	path      string
	overrides []config.Override
	reload    <-chan os.Signal // nil: only file changes reload
	plugins   []filter.Plugin  // decode the sections of each reload, kproxy's own and the program's
}

// policyShared is what the policy stages of every cluster share: the
// audit section in force and the audit.output file, which every virtual
// cluster writes to through one handle so that their lines do not
// interleave; and the enforcers and audit logs to flush at the end.
type policyShared struct {
	audit     atomic.Pointer[policyconfig.Audit]
	auditFile *os.File
	stages    []*policyStage // those with an enforcer
	auditLogs []*policy.AuditLog
}

func newPolicyShared(audit *policyconfig.Audit) *policyShared {
	sh := &policyShared{}
	sh.audit.Store(audit)
	return sh
}

// auditInForce is the audit section the last applied reload set.
func (sh *policyShared) auditInForce() *policyconfig.Audit { return sh.audit.Load() }

// withAuditWriter adds to opts the shared audit.output a virtual
// cluster's audit lines go to; standard output, and a file without
// virtual clusters, each audit log opens itself.
func (sh *policyShared) withAuditWriter(opts []policy.Option, virtualCluster string) ([]policy.Option, error) {
	a := sh.auditInForce()
	if virtualCluster == "" || a == nil || a.Output == "" || a.Output == policyconfig.AuditStdout {
		return opts, nil
	}
	if sh.auditFile == nil {
		f, err := os.OpenFile(a.Output, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			return nil, fmt.Errorf("audit.output: %w", err)
		}
		sh.auditFile = f
	}
	return append(opts, policy.WithAuditWriter(sh.auditFile)), nil
}

// applyAudit makes a reloaded file's audit section (audit.log_allowed)
// the one the stages reload with, before its clusters are applied.
func (sh *policyShared) applyAudit(cfg *config.Config) { sh.audit.Store(cfg.Audit) }

// configRejected counts a reload that found the file unreadable or
// invalid in each enforcer's metrics.
func (sh *policyShared) configRejected(err error) {
	for _, s := range sh.stages {
		s.applier.ConfigRejected(err)
	}
}

// close flushes the audit logs and closes the shared audit file.
func (sh *policyShared) close() {
	for _, s := range sh.stages {
		s.enf.Close()
	}
	for _, a := range sh.auditLogs {
		a.Close()
	}
	if sh.auditFile != nil {
		sh.auditFile.Close()
	}
}

// reloads re-read the file on each reload request and on changes to it,
// and hand each cluster its sections (the policy's, the program's).
type reloads struct {
	reloader *config.Reloader
	reload   <-chan os.Signal
	applied  *countedApplier
}

// startReloads watches the file cfg was loaded from. running is the
// file's configuration as loaded, before kproxy amended it.
func startReloads(cfg, running *config.Config, src policySource, built *clusterFilters, log zerolog.Logger, reg prometheus.Registerer) *reloads {
	for _, warning := range cfg.PolicyWarnings() {
		log.Warn().Str("warning", warning).Msg("configuration a client can sidestep (kproxy validate lists these)")
	}
	clusters := cfg.Clusters()
	appliers := make(clustersApplier, len(clusters))
	for i, cl := range clusters {
		appliers[cl.Name] = built.sections.reloader(i)
	}
	top := auditApplier{shared: built.policy, clusters: appliers}
	applied := newCountedApplier(top, cfg, newConfigMetrics(reg, cfg))
	return &reloads{
		reloader: config.NewReloader(src.path, running, applied, log, src.overrides...).WithFilters(src.plugins),
		reload:   src.reload,
		applied:  applied,
	}
}

// auditApplier sets the audit section in force, then applies each
// cluster's sections.
type auditApplier struct {
	shared   *policyShared
	clusters clustersApplier
}

func (a auditApplier) ApplyConfig(cfg *config.Config, log zerolog.Logger) error {
	a.shared.applyAudit(cfg)
	return a.clusters.ApplyConfig(cfg, log)
}

func (a auditApplier) ConfigRejected(err error) {
	a.shared.configRejected(err)
	a.clusters.ConfigRejected(err)
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
func (r *reloads) inForce() *config.Config { return r.applied.inForce.Load() }

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

// run reloads on each reload request and on file changes until ctx ends.
func (r *reloads) run(ctx context.Context) {
	go r.reloader.Watch(ctx, reloadPoll)
	for {
		select {
		case <-ctx.Done():
			return
		case sig := <-r.reload: // a nil channel never receives
			r.reloader.Reload(reloadTrigger(sig))
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
