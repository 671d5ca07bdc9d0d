package config

import (
	"errors"
	"fmt"
	"reflect"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/encryption/encryptionconfig"
	"github.com/kproxy/kproxy/internal/largemessage/largemessageconfig"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// FilterSections are the sections of the file that filters declare
// (filter.Factory), by section name: each decoded into the factory's
// configuration type and validated.
type FilterSections map[string]any

// claimSections decodes the top-level and per-virtual-cluster keys no core
// section has through the plugins that declare them. A key no plugin
// claims is an unknown key, as it would be without plugins; a key inside a
// claimed section that its type lacks is one too: these are decoding
// errors (err), reported before validation as the core's are. What the
// plugins' Validate found is returned to be reported with the rest of the
// file's problems. data is the file, for naming the keys of type errors.
func (c *Config) claimSections(data []byte, plugins []filter.Plugin) (problems []error, err error) {
	byName := sectionPlugins(plugins)
	var errs []error
	c.Filters, errs, problems = decodeSections(data, "", c.Unclaimed, byName)
	c.Unclaimed = nil
	for i := range c.VirtualClusters {
		vc := &c.VirtualClusters[i]
		var vcErrs, vcProblems []error
		vc.Filters, vcErrs, vcProblems = decodeSections(data, fmt.Sprintf("virtual_clusters[%d].", i), vc.Unclaimed, byName)
		vc.Unclaimed = nil
		errs, problems = append(errs, vcErrs...), append(problems, vcProblems...)
	}
	c.attachBuiltinSections()
	problems = append(problems, c.checkEncryptionKeys()...)
	return problems, errors.Join(errs...)
}

// builtinSections are the sections of kproxy's own filters: the policy's
// (with its quotas), record encryption's and large message offload's. The loader decodes and
// validates them as it does a program's.
func builtinSections() []filter.Plugin {
	return []filter.Plugin{policyconfig.PolicySection(), encryptionconfig.Section(), largemessageconfig.Section()}
}

// sectionPlugins are the plugins that decode the file's sections, by
// section name: the built-in ones, where plugins has none of the same
// name (the server passes the built-in factories completed with what
// builds the filter), and plugins.
func sectionPlugins(plugins []filter.Plugin) map[string]filter.Plugin {
	byName := map[string]filter.Plugin{}
	for _, p := range append(builtinSections(), plugins...) {
		byName[p.SectionName()] = p
	}
	return byName
}

// attachBuiltinSections sets the fields that give the code typed access
// to the built-in sections (Policy, Encryption, LargeMessages) from the decoded sections.
func (c *Config) attachBuiltinSections() {
	c.Policy, _ = c.Filters[policySection].(*policyconfig.Policy)
	c.Encryption, _ = c.Filters[encryptionconfig.SectionName].(*encryptionconfig.Config)
	c.LargeMessages, _ = c.Filters[largemessageconfig.SectionName].(*largemessageconfig.Config)
	for i := range c.VirtualClusters {
		vc := &c.VirtualClusters[i]
		vc.Policy, _ = vc.Filters[policySection].(*policyconfig.Policy)
		vc.Encryption, _ = vc.Filters[encryptionconfig.SectionName].(*encryptionconfig.Config)
		vc.LargeMessages, _ = vc.Filters[largemessageconfig.SectionName].(*largemessageconfig.Config)
	}
}

// policySection is the policy's section name.
const policySection = "policy"

// decodeSections decodes raw's sections under prefix (the path of the
// mapping holding them) with the plugins that claim them: the decoding
// errors, and the problems the plugins' Validate found.
func decodeSections(data []byte, prefix string, raw map[string]yaml.Node, plugins map[string]filter.Plugin) (_ FilterSections, errs, problems []error) {
	if len(raw) == 0 {
		return nil, nil, nil
	}
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	sort.Strings(names) // one order of errors for one file
	out := FilterSections{}
	for _, name := range names {
		node := raw[name]
		p, ok := plugins[name]
		if !ok {
			errs = append(errs, fmt.Errorf("line %d: %s%s: unknown key %q (docs/configuration.md lists every key)", node.Line, prefix, name, name))
			continue
		}
		key := prefix + name
		decode := func(into any) error {
			if unknown := unknownKeys(&node, reflect.TypeOf(into), key); len(unknown) > 0 {
				return errors.Join(unknown...)
			}
			if err := node.Decode(into); err != nil {
				return explainYAMLError(data, err)
			}
			return nil
		}
		cfg, found, err := p.DecodeSection(decode)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, pr := range found {
			at := key
			if pr.Key != "" {
				at += "." + pr.Key
			}
			problems = append(problems, fmt.Errorf("%s: %s", at, pr.Message))
		}
		out[name] = cfg
	}
	return out, errs, problems
}

// unknownKeys lists the keys of n, at path, that type t has no field for,
// each as an error naming its full key and line.
func unknownKeys(n *yaml.Node, t reflect.Type, path string) []error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		var errs []error
		for i, item := range n.Content {
			errs = append(errs, unknownKeys(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return errs
	case t.Kind() != reflect.Struct || t == durationType || n.Kind != yaml.MappingNode:
		return nil // a scalar, or a shape node.Decode reports
	}
	fields := map[string]reflect.Type{}
	for _, f := range structKeys(t) {
		name, _, _ := yamlName(f)
		fields[name] = f.Type
	}
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ft, ok := fields[k.Value]
		if !ok {
			errs = append(errs, fmt.Errorf("line %d: %s.%s: unknown key %q", k.Line, path, k.Value, k.Value))
			continue
		}
		errs = append(errs, unknownKeys(v, ft, path+"."+k.Value)...)
	}
	return errs
}

// inheritSections is the sections a virtual cluster's engine runs with:
// its own, and the top level's it does not set.
func inheritSections(top, own FilterSections) FilterSections {
	if len(own) == 0 {
		return top
	}
	out := make(FilterSections, len(top)+len(own))
	for name, cfg := range top {
		out[name] = cfg
	}
	for name, cfg := range own {
		out[name] = cfg
	}
	return out
}

// CheckPlugins reports plugins whose sections cannot be told apart (a
// section without a name, one two plugins declare, or one that is a
// core key of the file) or are not documented: each key of a section
// needs its row (filter.Factory.Keys), as each of kproxy's own does.
func CheckPlugins(plugins []filter.Plugin) error {
	core := map[string]bool{}
	for _, k := range fileKeys() {
		core[k.Path] = true
	}
	var errs []error
	seen := map[string]bool{}
	for i, p := range plugins {
		name := p.SectionName()
		switch {
		case name == "":
			errs = append(errs, fmt.Errorf("plugin %d (%T): no section name", i, p))
		case core[name] || name == "virtual_clusters[]":
			errs = append(errs, fmt.Errorf("plugin %d (%T): section %q is a key of kproxy's own", i, p, name))
		case seen[name]:
			errs = append(errs, fmt.Errorf("plugin %d (%T): section %q is declared twice", i, p, name))
		default:
			errs = append(errs, checkPluginReference(p)...)
		}
		seen[name] = true
	}
	return errors.Join(errs...)
}

// PluginReference is the rows documenting p's section, with their keys as
// written at the top level (require_header.topics); in a virtual cluster
// the same rows apply (virtual_clusters[].require_header.topics).
func PluginReference(p filter.Plugin) []KeyDoc {
	return filter.KeysUnder(p.SectionName(), p.SectionKeys())
}

// checkPluginReference reports the keys of p's section that have no row
// in p.SectionKeys, the rows that name no key, and rows without a meaning.
func checkPluginReference(p filter.Plugin) []error {
	name := p.SectionName()
	documented := map[string]bool{}
	var errs []error
	for _, d := range PluginReference(p) {
		if documented[d.Key] {
			errs = append(errs, fmt.Errorf("section %s: key %s has two rows", name, d.Key))
		}
		documented[d.Key] = true
		if d.Meaning == "" {
			errs = append(errs, fmt.Errorf("section %s: the row of %s has no meaning", name, d.Key))
		}
	}
	written := map[string]bool{name: true}
	t := p.SectionType()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return append(errs, fmt.Errorf("section %s: its type %s is not a struct", name, t))
	}
	for _, k := range typeKeys(t, name+".") {
		written[k.Path] = true
		if !documented[k.Path] {
			errs = append(errs, fmt.Errorf("section %s: key %s (field %s) has no row in the factory's Keys", name, k.Path, k.Field.Name))
		}
	}
	if !documented[name] {
		errs = append(errs, fmt.Errorf("section %s: no row documents the section itself (Key \"\")", name))
	}
	for key := range documented {
		if !written[key] {
			errs = append(errs, fmt.Errorf("section %s: row %s names no key of %s", name, key, t))
		}
	}
	return errs
}
