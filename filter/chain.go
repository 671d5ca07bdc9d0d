package filter

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
)

// Placed is a Filter that says which phase of the chain it runs in. A
// Filter that does not implement it runs in PhaseProgram.
type Placed interface {
	Filter
	Phase() Phase
}

// At places f in phase p, whatever phase f says it runs in: for the
// engine's own features, and for a program filter that must run, say,
// before the policy decides.
func At(p Phase, f Filter) Placed { return placed{f: f, phase: p} }

type placed struct {
	f     Filter
	phase Phase
}

func (p placed) Register(r *Registry) { p.f.Register(r) }
func (p placed) Phase() Phase         { return p.phase }

// PhaseOf is the phase f runs in.
func PhaseOf(f Filter) Phase {
	if p, ok := f.(Placed); ok && p.Phase() != 0 {
		return p.Phase()
	}
	return PhaseProgram
}

// Link is one filter of the chain, as Registry.Chain lists it.
type Link struct {
	Phase Phase
	// Filter names the filter's type, for example "policy.Enforcer".
	Filter string
}

func (l Link) String() string { return l.Phase.String() + ": " + l.Filter }

// Add registers each filter in fs, in its phase (PhaseOf), after the
// filters added before it. Handlers a filter registers without Add (by
// calling its Register directly) run in PhaseProgram.
func (r *Registry) Add(fs ...Filter) {
	for _, f := range fs {
		r.phase = PhaseOf(f)
		f.Register(r)
		r.links = append(r.links, Link{Phase: r.phase, Filter: filterName(f)})
		r.phase = 0
	}
}

// Chain lists the filters Add registered, in the order requests pass
// them.
func (r *Registry) Chain() []Link {
	links := slices.Clone(r.links)
	slices.SortStableFunc(links, func(a, b Link) int { return cmp.Compare(a.Phase, b.Phase) })
	return links
}

// currentPhase is the phase of the filter being added, PhaseProgram
// outside Add.
func (r *Registry) currentPhase() Phase {
	if r.phase == 0 {
		return PhaseProgram
	}
	return r.phase
}

// filterName is the name of f's type without its pointer, looking
// through At.
func filterName(f Filter) string {
	if p, ok := f.(placed); ok {
		return filterName(p.f)
	}
	t := reflect.TypeOf(f)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return fmt.Sprintf("%T", f)
	}
	return t.String()
}
