package filter

import (
	"context"
	"fmt"
	"reflect"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Factory builds a filter from its own section of the configuration file,
// as Kroxylicious' FilterFactory<C> and Caddy modules do: the filter's
// package declares the section's name and its typed configuration C, and
// kproxy's loader decodes, checks and hands it over. The section is
// written at the top level and in any virtual cluster
// (virtual_clusters[].SECTION); a virtual cluster without it inherits the
// top level's. Where neither sets it, the filter is not built.
//
// Decoding is strict: a key that is not a field of C (by its yaml tag) is
// an error naming the key, as anywhere in the file, and a top-level key
// that no core section and no factory claims is one too.
type Factory[C any] struct {
	// Section is the section's key, such as "require_header".
	Section string
	// Keys document the section for users, one row per key of C, each
	// Key relative to the section ("" for the section itself, "topics",
	// "limits.max_bytes"; a list of sections is written name[]). kproxy
	// refuses a factory with a key that has no row, as its own reference
	// test does.
	Keys []KeyDoc
	// Phase is where the filter runs in the chain; zero is PhaseProgram.
	Phase Phase
	// Validate, when set, checks a decoded section. It reports each problem
	// under its key relative to the section ("topics[1]"; "" for the
	// section itself), and the loader names the full key.
	Validate func(cfg *C, problems *Problems)
	// New builds the filter of one cluster (the file, or one virtual
	// cluster) from its section. It is called once per cluster at start.
	New func(cfg *C, env Env) (Filter, error)
	// Reload, when set, makes the section apply without a restart: on
	// SIGHUP or a change to the file, each filter New built is handed its
	// new section (valid, as Validate checked it). It runs while the
	// filter's handlers serve requests, so it must swap what they read
	// atomically. An error keeps what was in force. Without Reload a
	// changed section is logged as needing a restart. log carries the
	// reload's trigger, file and virtual cluster, for what Reload logs of
	// the change.
	Reload func(f Filter, cfg *C, log zerolog.Logger) error
	// WithoutSection builds the filter in every cluster, New getting nil
	// where the cluster has no section, and hands Reload nil when a reload
	// removes it: a section added or removed by a reload then applies
	// without a restart, as the policy's does (its quotas and audit lines
	// run without a policy). It needs Reload.
	WithoutSection bool
}

// Env is what a filter is built in.
type Env struct {
	// VirtualCluster is the virtual cluster's name, "" for a file without
	// virtual_clusters.
	VirtualCluster string
	// Log is kproxy's logger, with the virtual cluster's name in it.
	Log zerolog.Logger
	// Metrics registers the filter's series, labelled with the virtual
	// cluster's name (virtual_cluster) when there is one, so that the
	// virtual clusters of one process share a registry without colliding.
	Metrics prometheus.Registerer
	// Upstream asks the cluster the virtual cluster fronts with kproxy's
	// own connection (upstream.sasl, upstream.tls), its answers in the
	// virtual cluster's names (a topic id of another tenant's topic is not
	// named); nil where kproxy has no way in of its own (SASL passthrough
	// without upstream.sasl) and in a cluster that sets none of the
	// filters' sections.
	Upstream Requester
}

// Requester sends a request to the upstream cluster and returns its
// response, as a franz-go client's Request does.
type Requester interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// Problems collects what is wrong with a section, each under its key.
type Problems struct {
	list []Problem
}

// Problem is one invalid key of a section.
type Problem struct {
	// Key is relative to the section ("" for the section itself).
	Key string
	// Message says what is wrong and what would be valid.
	Message string
}

// Add reports that key (relative to the section) is invalid.
func (p *Problems) Add(key, format string, args ...any) {
	p.list = append(p.list, Problem{Key: key, Message: fmt.Sprintf(format, args...)})
}

// List is the problems added, in order.
func (p *Problems) List() []Problem { return p.list }

// Plugin is a Factory with its configuration type erased, as a program
// lists its factories (proxy.Options.Plugins) and the loader uses them.
// Factory is its only implementation.
type Plugin interface {
	// SectionName is the section's key.
	SectionName() string
	// FilterPhase is where the filter runs.
	FilterPhase() Phase
	// SectionType is the section's Go type (a struct with yaml tags).
	SectionType() reflect.Type
	// SectionKeys are the rows documenting the section (Factory.Keys).
	SectionKeys() []KeyDoc
	// DecodeSection decodes one occurrence of the section with decode
	// (which refuses unknown keys) and validates it.
	DecodeSection(decode func(into any) error) (cfg any, problems []Problem, err error)
	// NewFilter builds a filter from a section DecodeSection returned.
	NewFilter(cfg any, env Env) (Filter, error)
	// Reloadable reports whether a changed section applies without a
	// restart.
	Reloadable() bool
	// ReloadFilter hands f, built by NewFilter, its new section (nil:
	// removed, for a plugin built without a section).
	ReloadFilter(f Filter, cfg any, log zerolog.Logger) error
	// BuiltWithoutSection reports whether the filter is built, and
	// reloaded, where its section is not set (Factory.WithoutSection).
	BuiltWithoutSection() bool
}

// SectionName is f.Section.
func (f Factory[C]) SectionName() string { return f.Section }

// FilterPhase is f.Phase, PhaseProgram when unset.
func (f Factory[C]) FilterPhase() Phase {
	if f.Phase == 0 {
		return PhaseProgram
	}
	return f.Phase
}

// SectionType is C.
func (f Factory[C]) SectionType() reflect.Type { return reflect.TypeFor[C]() }

// SectionKeys is f.Keys.
func (f Factory[C]) SectionKeys() []KeyDoc { return f.Keys }

// DecodeSection decodes into a new C and runs Validate on it.
func (f Factory[C]) DecodeSection(decode func(into any) error) (any, []Problem, error) {
	cfg := new(C)
	if err := decode(cfg); err != nil {
		return nil, nil, err
	}
	var problems Problems
	if f.Validate != nil {
		f.Validate(cfg, &problems)
	}
	return cfg, problems.list, nil
}

// NewFilter calls New with the section DecodeSection returned (nil: none).
func (f Factory[C]) NewFilter(cfg any, env Env) (Filter, error) {
	c, err := f.typed(cfg)
	if err != nil {
		return nil, err
	}
	return f.New(c, env)
}

// Reloadable reports whether f.Reload is set.
func (f Factory[C]) Reloadable() bool { return f.Reload != nil }

// ReloadFilter calls Reload; without it, it does nothing.
func (f Factory[C]) ReloadFilter(flt Filter, cfg any, log zerolog.Logger) error {
	if f.Reload == nil {
		return nil
	}
	c, err := f.typed(cfg)
	if err != nil {
		return err
	}
	return f.Reload(flt, c, log)
}

// BuiltWithoutSection is f.WithoutSection.
func (f Factory[C]) BuiltWithoutSection() bool { return f.WithoutSection }

// typed is cfg as New and Reload take it: nil for no section.
func (f Factory[C]) typed(cfg any) (*C, error) {
	if cfg == nil {
		return nil, nil
	}
	c, ok := cfg.(*C)
	if !ok {
		return nil, fmt.Errorf("%s: section decoded as %T, not %T", f.Section, cfg, c)
	}
	return c, nil
}
