package engine

// pairMemory is a pair's filter.Memory: filters charge what they hold to
// the pair's account of limits.max_buffered_bytes, under the budget's
// rules (arrival order, the standstill rule), and a charge waiting when
// the pair closes gives up.
type pairMemory struct{ p *pair }

func (m pairMemory) Acquire(n int64) error { return m.p.s.budget.acquire(&m.p.budget, n, m.p.closed) }

func (m pairMemory) Release(n int64) { m.p.s.budget.release(&m.p.budget, n) }
