package tenant

import "github.com/kproxy/kproxy/filter"

// Register registers no handler: the engine runs the mapper itself, as
// the chain's name boundary, which maps requests after every request
// filter and responses before every response filter (internal/engine/names.go).
// Among the engine's filters it becomes that boundary.
func (m *Mapper) Register(*filter.Registry) {}

// Phase is where the name boundary runs: next to the cluster.
func (m *Mapper) Phase() filter.Phase { return filter.PhaseNames }
