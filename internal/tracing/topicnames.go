package tracing

import (
	"github.com/kproxy/kproxy/filter"
)

// Phase places the tracer in filter.PhaseProgram, after the name
// boundary and the policy's response hooks: it learns topics as the
// client is told them (a tenant's unprefixed), so that spans of requests
// naming a topic by id carry the name the client knows (Produce and Fetch
// from v13 name topics by id only).
func (t *Tracer) Phase() filter.Phase { return filter.PhaseProgram }

// Register implements filter.Filter: the tracer learns topic names from
// Metadata responses.
func (t *Tracer) Register(r *filter.Registry) {
	filter.OnResponse(r, t.topics.Learn)
}
