package quota

import "github.com/kproxy/kproxy/filter"

// Register registers no handler: the engine runs the quota engine itself,
// as the chain's quota stage, which holds requests to their connection's
// quotas (internal/engine/quota.go). Among the engine's filters it becomes that
// stage.
func (e *Engine) Register(*filter.Registry) {}

// Phase is where the quota stage runs: last before the cluster.
func (e *Engine) Phase() filter.Phase { return filter.PhaseQuota }
