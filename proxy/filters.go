package proxy

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
)

// clusterFilters are what each cluster's engine is built with besides the
// file: the filters of its sections, kproxy's own (the policy's) and the
// program's, and what they share.
type clusterFilters struct {
	upstreams *upstreams
	policy    *policyShared
	sections  *sectionFilters
	plugins   []filter.Plugin // kproxy's own sections, then the program's
}

// buildClusterFilters builds, for each cluster of cfg, the filters of its
// sections: the policy's and those of the program's plugins.
func buildClusterFilters(cfg *config.Config, programPlugins []filter.Plugin, log zerolog.Logger, reg prometheus.Registerer) (_ *clusterFilters, err error) {
	// c, not the named result: an early "return nil, err" sets the result
	// to nil before this deferred close runs.
	c := &clusterFilters{policy: newPolicyShared(cfg.Audit)}
	c.plugins = append([]filter.Plugin{policyFactory(c.policy), encryptionFactory(cfg), largeMessageFactory()}, programPlugins...)
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	if c.upstreams, err = newUpstreams(cfg); err != nil {
		return nil, err
	}
	env := func(i int, cl config.Cluster) filter.Env {
		return filter.Env{VirtualCluster: cl.Name, Log: clusterLogger(log, cl.Name),
			Metrics: clusterRegisterer(reg, cl.Name), Upstream: c.upstreams.requester(i)}
	}
	if c.sections, err = buildSectionFilters(cfg, c.plugins, env); err != nil {
		return nil, err
	}
	return c, nil
}

// close flushes the policy's audit logs, then closes the upstream clients.
func (c *clusterFilters) close() {
	c.policy.close()
	if c.upstreams != nil {
		c.upstreams.close()
	}
}

// sectionFilters are the filters built from the sections' factories, for
// each cluster the file serves.
type sectionFilters struct {
	byCluster [][]builtFilter // as cfg.Clusters() lists the clusters
}

// builtFilter is one filter a factory built from its section.
type builtFilter struct {
	plugin filter.Plugin
	filter filter.Filter
}

// chaining is a built filter that puts other filters in the chain in its
// place, each in its own phase: the policy's puts its enforcer, if any,
// and its quota engine, which the engine runs as its quota stage.
type chaining interface {
	chained() []filter.Filter
}

// buildSectionFilters builds, for each cluster, a filter from each
// plugin's section that the cluster has (its own, or the top level's),
// and from those built without one; env is what cluster i's are built in.
func buildSectionFilters(cfg *config.Config, plugins []filter.Plugin, env func(i int, cl config.Cluster) filter.Env) (*sectionFilters, error) {
	clusters := cfg.Clusters()
	out := &sectionFilters{byCluster: make([][]builtFilter, len(clusters))}
	for i, cl := range clusters {
		for _, p := range plugins {
			section, ok := cl.Config.Filters[p.SectionName()]
			if !ok && !p.BuiltWithoutSection() {
				continue
			}
			f, err := p.NewFilter(section, env(i, cl))
			if err != nil {
				err = fmt.Errorf("%s: %w", p.SectionName(), err)
				if cl.Name != "" {
					err = fmt.Errorf("virtual cluster %s (virtual_clusters[%d]): %w", cl.Name, i, err)
				}
				return nil, err
			}
			out.byCluster[i] = append(out.byCluster[i], builtFilter{plugin: p, filter: f})
		}
	}
	return out, nil
}

// filters are cluster i's filters from sections and program's own, in
// phase order; within a phase, kproxy's own, those of Options.Plugins in
// their order, then Options.Filters.
func (s *sectionFilters) filters(i int, program []filter.Filter) []filter.Filter {
	type phased struct {
		phase filter.Phase
		f     filter.Filter
	}
	var all []phased
	for _, b := range s.byCluster[i] {
		c, ok := b.filter.(chaining)
		if !ok {
			all = append(all, phased{b.plugin.FilterPhase(), b.filter})
			continue
		}
		for _, f := range c.chained() {
			all = append(all, phased{filter.PhaseOf(f), f})
		}
	}
	for _, f := range program {
		all = append(all, phased{filter.PhaseProgram, f})
	}
	slices.SortStableFunc(all, func(a, b phased) int { return cmp.Compare(a.phase, b.phase) })
	out := make([]filter.Filter, len(all))
	for j, p := range all {
		out[j] = p.f
	}
	return out
}

// reloader is cluster i's applier of reloaded sections.
func (s *sectionFilters) reloader(i int) config.Applier {
	return sectionReloader{built: s.byCluster[i]}
}

// sectionReloader hands each reloadable filter of one cluster its
// reloaded section. A section added or removed needs a restart, unless
// its filter is built without one: the filter's place in the chain is
// fixed at start.
type sectionReloader struct {
	built []builtFilter
}

func (r sectionReloader) ApplyConfig(cfg *config.Config, log zerolog.Logger) error {
	var errs []error
	for _, b := range r.built {
		name := b.plugin.SectionName()
		if !b.plugin.Reloadable() {
			continue // RestartNeeded logged a change
		}
		section, ok := cfg.Filters[name]
		if !ok && !b.plugin.BuiltWithoutSection() {
			log.Warn().Str("section", name).Msg("configuration section removed; the filter stays until a restart")
			continue
		}
		if err := b.plugin.ReloadFilter(b.filter, section, log); err != nil {
			log.Error().Err(err).Str("section", name).Msg("section reload rejected; what was in force stays")
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		log.Info().Str("section", name).Msg("section reloaded")
	}
	return errors.Join(errs...)
}

// ConfigRejected: the filters keep what they run with.
func (sectionReloader) ConfigRejected(error) {}
