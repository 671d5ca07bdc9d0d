package config

import (
	"reflect"
	"slices"
	"strings"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// RestartNeeded names the top-level sections (by their YAML keys, or
// audit.output and audit.buffer_size) that differ between the running
// configuration and a new one, other than what a reload applies: the
// policy and audit.log_allowed (each virtual cluster's policy too). It walks every field of Config, so
// sections added later need a restart unless they are listed here.
func RestartNeeded(old, cur *Config) []string { return restartNeeded(old, cur, nil) }

// restartNeeded is RestartNeeded where the sections of plugins apply as
// their factories say (sectionReloads).
func restartNeeded(old, cur *Config, plugins []filter.Plugin) []string {
	reloadable := sectionReloads(plugins)
	var keys []string
	ov, cv := reflect.ValueOf(*old), reflect.ValueOf(*cur)
	for i := 0; i < ov.NumField(); i++ {
		f := ov.Type().Field(i)
		if !f.IsExported() { // not from the file
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "" {
			key = f.Name
		}
		switch key {
		case "-":
			if f.Name == "Filters" {
				keys = append(keys, changedSections(old.Filters, cur.Filters, reloadable)...)
			}
		case "virtual_clusters":
			if !reflect.DeepEqual(withoutReloaded(old.VirtualClusters, reloadable), withoutReloaded(cur.VirtualClusters, reloadable)) {
				keys = append(keys, key)
			}
		case "audit":
			if auditOutput(old.Audit) != auditOutput(cur.Audit) {
				keys = append(keys, "audit.output")
			}
			if auditBuffer(old.Audit) != auditBuffer(cur.Audit) {
				keys = append(keys, "audit.buffer_size")
			}
		default:
			if !reflect.DeepEqual(ov.Field(i).Interface(), cv.Field(i).Interface()) {
				keys = append(keys, key)
			}
		}
	}
	return keys
}

func auditOutput(a *policyconfig.Audit) string {
	if a == nil || a.Output == "" {
		return policyconfig.AuditStdout
	}
	return a.Output
}

func auditBuffer(a *policyconfig.Audit) int {
	if a == nil || a.BufferSize == 0 {
		return policyconfig.DefaultAuditBufferSize
	}
	return a.BufferSize
}

// sectionReload is how a reload applies a filter's section.
type sectionReload uint8

const (
	// reloadRestarts: a change needs a restart (the zero value, for a
	// section no plugin declares).
	reloadRestarts sectionReload = iota
	// reloadChanges: a change applies; adding or removing the section
	// needs a restart, as the filter's place in the chain is fixed.
	reloadChanges
	// reloadAlways: the filter is in the chain without its section
	// (filter.Factory.WithoutSection), so adding and removing it apply too.
	reloadAlways
)

// sectionReloads says, by section name, how a reload applies the
// sections of plugins and kproxy's own.
func sectionReloads(plugins []filter.Plugin) map[string]sectionReload {
	out := map[string]sectionReload{}
	for name, p := range sectionPlugins(plugins) {
		switch {
		case p.BuiltWithoutSection():
			out[name] = reloadAlways
		case p.Reloadable():
			out[name] = reloadChanges
		}
	}
	return out
}

// withoutReloaded is vcs with what a reload applies left out: their
// policies and the filters' sections reloadable applies.
func withoutReloaded(vcs []VirtualCluster, reloadable map[string]sectionReload) []VirtualCluster {
	out := make([]VirtualCluster, len(vcs))
	for i, vc := range vcs {
		vc.Policy = nil
		kept := FilterSections{}
		for name, cfg := range vc.Filters {
			switch reloadable[name] {
			case reloadAlways:
				continue
			case reloadChanges:
				cfg = struct{}{} // only adding or removing it needs a restart
			}
			kept[name] = cfg
		}
		vc.Filters = kept
		out[i] = vc
	}
	return out
}

// changedSections names the filters' sections that differ between old
// and cur, other than those reloadable applies: a filter is added to the
// chain, or taken out, only at start.
func changedSections(old, cur FilterSections, reloadable map[string]sectionReload) []string {
	names := map[string]bool{}
	for name := range old {
		names[name] = true
	}
	for name := range cur {
		names[name] = true
	}
	var changed []string
	for name := range names {
		_, inOld := old[name]
		_, inCur := cur[name]
		applies := reloadable[name] == reloadAlways || reloadable[name] == reloadChanges && inOld == inCur
		if !applies && !reflect.DeepEqual(old[name], cur[name]) {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	return changed
}
