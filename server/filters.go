package server

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
)

// sectionFilters are the filters built from the program's factories
// (Options.Plugins), for each cluster the file serves.
type sectionFilters struct {
	byCluster [][]builtFilter // as cfg.Clusters() lists the clusters
}

// builtFilter is one filter a factory built from its section.
type builtFilter struct {
	plugin filter.Plugin
	filter filter.Filter
}

// buildSectionFilters builds, for each cluster, a filter from each
// plugin's section that the cluster has (its own, or the top level's).
func buildSectionFilters(cfg *config.Config, plugins []filter.Plugin, log zerolog.Logger) (*sectionFilters, error) {
	clusters := cfg.Clusters()
	out := &sectionFilters{byCluster: make([][]builtFilter, len(clusters))}
	for i, cl := range clusters {
		for _, p := range plugins {
			section, ok := cl.Config.Filters[p.SectionName()]
			if !ok {
				continue
			}
			f, err := p.NewFilter(section, filter.Env{VirtualCluster: cl.Name, Log: clusterLogger(log, cl.Name)})
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
// phase order; within a phase, those of Options.Plugins in their order,
// then Options.Filters.
func (s *sectionFilters) filters(i int, program []filter.Filter) []filter.Filter {
	type phased struct {
		phase filter.Phase
		f     filter.Filter
	}
	var all []phased
	for _, b := range s.byCluster[i] {
		all = append(all, phased{b.plugin.FilterPhase(), b.filter})
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

// reloader is cluster i's applier of reloaded sections, after inner (the
// policy's) accepted the file.
func (s *sectionFilters) reloader(i int, inner config.Applier) config.Applier {
	if s == nil || len(s.byCluster[i]) == 0 {
		return inner
	}
	return sectionReloader{Applier: inner, built: s.byCluster[i]}
}

// sectionReloader hands each reloadable filter of one cluster its
// reloaded section. A section added or removed needs a restart: the
// filter's place in the chain is fixed at start.
type sectionReloader struct {
	config.Applier
	built []builtFilter
}

func (r sectionReloader) ApplyConfig(cfg *config.Config, log zerolog.Logger) error {
	if err := r.Applier.ApplyConfig(cfg, log); err != nil {
		return err
	}
	var errs []error
	for _, b := range r.built {
		name := b.plugin.SectionName()
		if !b.plugin.Reloadable() {
			continue // RestartNeeded logged a change
		}
		section, ok := cfg.Filters[name]
		if !ok {
			log.Warn().Str("section", name).Msg("configuration section removed; the filter stays until a restart")
			continue
		}
		if err := b.plugin.ReloadFilter(b.filter, section); err != nil {
			log.Error().Err(err).Str("section", name).Msg("section reload rejected; what was in force stays")
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		log.Info().Str("section", name).Msg("section reloaded")
	}
	return errors.Join(errs...)
}
