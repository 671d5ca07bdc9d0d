package proxy

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/policy"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// policyFactory is the policy's section (policyconfig.PolicySection)
// completed with what builds and reloads a cluster's policy stage: its
// enforcer and quotas, writing audit lines through shared.
func policyFactory(shared *policyShared) filter.Factory[policyconfig.Policy] {
	f := policyconfig.PolicySection()
	f.New = func(p *policyconfig.Policy, env filter.Env) (filter.Filter, error) {
		return shared.newStage(p, env)
	}
	f.Reload = func(flt filter.Filter, p *policyconfig.Policy, log zerolog.Logger) error {
		return flt.(*policyStage).reload(p, shared.auditInForce(), log)
	}
	return f
}

// policyStage is one cluster's policy: the enforcer, when the policy
// authorizes at start, and the quota engine, which every cluster has so
// that a reload may add quotas.
type policyStage struct {
	enf     *policy.Enforcer // nil: no policy that authorizes at start
	quotas  *quota.Engine
	applier config.Applier // reloads enf, logging what changed
}

// Register registers the enforcer's handlers; the chain runs the
// enforcer and the quota engine in their own phases (chained).
func (s *policyStage) Register(r *filter.Registry) {
	if s.enf != nil {
		s.enf.Register(r)
	}
}

// chained is what the stage puts in the chain: the enforcer, if any, and
// the quota engine, which the engine runs as its quota stage.
func (s *policyStage) chained() []filter.Filter {
	if s.enf == nil {
		return []filter.Filter{s.quotas}
	}
	return []filter.Filter{s.enf, s.quotas}
}

// reload applies a reloaded policy and its quotas: both change, or
// neither does when the policy is refused.
func (s *policyStage) reload(p *policyconfig.Policy, audit *policyconfig.Audit, log zerolog.Logger) error {
	if err := s.applier.ApplyConfig(&config.Config{Policy: p, Audit: audit}, log); err != nil {
		return err
	}
	if err := s.quotas.Reload(p); err != nil {
		log.Error().Err(err).Msg("quota reload rejected; the quotas in force stay")
		return err
	}
	log.Info().Int("quotas", s.quotas.Active()).Msg("quotas reloaded; apply to the next request on every connection")
	return nil
}

// newStage builds a cluster's policy stage from its policy (nil: none).
func (sh *policyShared) newStage(p *policyconfig.Policy, env filter.Env) (*policyStage, error) {
	enf, err := sh.newEnforcer(p, env)
	if err != nil {
		return nil, err
	}
	s := &policyStage{enf: enf, applier: policy.ClusterReloadApplier(enf, env.VirtualCluster)}
	if enf != nil {
		sh.stages = append(sh.stages, s) // flushed and closed with the rest
	}
	auditor, err := sh.quotaAuditor(enf, env)
	if err != nil {
		return nil, err
	}
	if s.quotas, err = quota.New(p, policy.QuotaMatcher, env.Metrics, auditor); err != nil {
		return nil, fmt.Errorf("quotas: %w", err)
	}
	if n := s.quotas.Active(); n > 0 {
		env.Log.Info().Int("quotas", n).Msg("quotas in force")
	}
	return s, nil
}

// newEnforcer builds the enforcer of p, nil when p does not authorize
// (no policy, or quotas alone); env.Upstream (nil: none) resolves topic
// ids.
func (sh *policyShared) newEnforcer(p *policyconfig.Policy, env filter.Env) (*policy.Enforcer, error) {
	authorizes := p.Authorizes()
	if authorizes == nil {
		return nil, nil
	}
	opts := []policy.Option{policy.WithLogger(env.Log), policy.WithRegisterer(env.Metrics)}
	if env.Upstream != nil {
		opts = append(opts, policy.WithTopicResolver(env.Upstream))
	}
	opts, err := sh.withAuditWriter(opts, env.VirtualCluster)
	if err != nil {
		return nil, err
	}
	enf, err := policy.New(authorizes, sh.auditInForce(), opts...)
	if err != nil {
		return nil, err
	}
	_, desc := enf.Active()
	env.Log.Info().Str("policy", desc).Msg("policy in force; SIGHUP or a change to the configuration file reloads it")
	return enf, nil
}

// quotaAuditor is where a cluster's quota engine writes its throttle
// lines: the enforcer's audit log, or, for a cluster without one, an
// audit log of its own on the same audit.output (started by its first
// line).
func (sh *policyShared) quotaAuditor(enf *policy.Enforcer, env filter.Env) (quota.Auditor, error) {
	if enf != nil {
		return enf, nil
	}
	opts, err := sh.withAuditWriter([]policy.Option{policy.WithRegisterer(env.Metrics)}, env.VirtualCluster)
	if err != nil {
		return nil, err
	}
	a, err := policy.NewAuditLog(sh.auditInForce(), opts...)
	if err != nil {
		return nil, err
	}
	sh.auditLogs = append(sh.auditLogs, a)
	return a, nil
}
