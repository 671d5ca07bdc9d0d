package policy

import (
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
)

// decideProduceRaw decides a Produce request from its raw body when the
// policy allows all of it, so the engine forwards the original bytes
// without decoding them: the common case, and the one whose cost is paid on
// every produce. It reads only what the decision needs (transactional id,
// acks, topic names or ids, record batch headers) through a pooled
// wire.ProduceSummary.
//
// Anything else is left undecided, and the engine decodes the request for
// handleProduce, which answers it as before: a denial anywhere (to split
// or refuse it), audit mode's would-be denials, unknown topic ids, bodies
// the summary, like kmsg, refuses, and requests too large to summarize.
// Nothing is recorded for a request left undecided, so handleProduce
// records each decision once; for an allowed one, the decisions are
// recorded as handleProduce records them.
func (e *Enforcer) decideProduceRaw(conn *filter.Conn, version int16, body []byte) (filter.Verdict, bool) {
	s, _ := e.summaries.Get().(*wire.ProduceSummary)
	if s == nil {
		s = new(wire.ProduceSummary)
	}
	defer func() {
		s.Reset() // holds no alias of the frame once pooled
		e.summaries.Put(s)
	}()
	if s.Parse(version, body) != nil {
		return filter.Verdict{}, false // the decoder refuses it too and says why, or it is too large to summarize
	}
	st := e.cur.Load()
	if st == nil {
		return filter.Verdict{}, true
	}
	entry := e.table[wire.ProduceKey]
	c := reqCtx{e: e, st: st, prin: principalOf(conn), client: conn.Client, key: wire.ProduceKey, entry: entry}
	c.subj = st.subject(&c.prin)
	if !c.produceAllowed(s) {
		return filter.Verdict{}, false
	}
	c.recordProduceAllowed(s)
	return filter.Verdict{}, true
}

// produceAllowed reports whether handleProduce would forward the request
// unchanged, recording nothing: every check it makes passes.
func (c *reqCtx) produceAllowed(s *wire.ProduceSummary) bool {
	if (c.st.gov.hasClientID || c.st.gov.forbids) && !c.connectionGovernanceClean() {
		return false
	}
	if s.HasTransactionalID && !c.decide(OpWrite, ResTransactionalID, s.TransactionalID).Allowed {
		return false
	}
	checkTxn := !s.HasTransactionalID && !c.st.auditOnly
	for _, g := range c.governance() {
		if g.produce == nil || !g.produce.checkAcks || acksSatisfy(s.Acks, g.produce.minAcks) {
			continue
		}
		for i := 0; i < s.Topics(); i++ {
			name, id, _ := s.Topic(i)
			if name, _ = c.topicName(name, id); g.coversTopic(name) {
				return false
			}
		}
	}
	for i := 0; i < s.Topics(); i++ {
		name, id, parts := s.Topic(i)
		name, known := c.topicName(name, id)
		if !known || !c.decide(OpWrite, ResTopic, name).Allowed {
			return false
		}
		batchRules := c.batchRulesFor(name)
		if !checkTxn && !batchRules {
			continue
		}
		for j := 0; j < parts; j++ {
			_, records := s.Partition(i, j)
			b := summarizeBatches(records)
			if checkTxn && b.transactional || batchRules && c.batchesViolate(name, b) {
				return false
			}
		}
	}
	return true
}

// batchRulesFor reports whether any produce governance rule with a batch
// check (compression, size, idempotence) covers topic.
func (c *reqCtx) batchRulesFor(topic string) bool {
	for _, g := range c.governance() {
		if pg := g.produce; pg != nil && (pg.compression != 0 || pg.maxBatch > 0 || pg.idempotent) && g.coversTopic(topic) {
			return true
		}
	}
	return false
}

// batchesViolate is checkBatches's verdict over a partition's batches,
// from their summary.
func (c *reqCtx) batchesViolate(topic string, b batchSummary) bool {
	for _, g := range c.governance() {
		pg := g.produce
		if pg == nil || (pg.compression == 0 && pg.maxBatch == 0 && !pg.idempotent) || !g.coversTopic(topic) {
			continue
		}
		if pg.compression != 0 && b.codecs&^pg.compression != 0 ||
			pg.maxBatch > 0 && b.maxSize > pg.maxBatch ||
			pg.idempotent && b.withoutProducerID {
			return true
		}
	}
	return false
}

// connectionGovernanceClean reports whether connectionGovernance would let
// the request on without a violation.
func (c *reqCtx) connectionGovernanceClean() bool {
	for _, g := range c.governance() {
		if g.clientID != nil && !g.clientID.match(c.prin.ClientID) || g.forbidden[c.key] {
			return false
		}
	}
	return true
}

// recordProduceAllowed records the allowed decisions handleProduce would
// have recorded, in its order: the transactional id, then each topic.
func (c *reqCtx) recordProduceAllowed(s *wire.ProduceSummary) {
	if !c.st.logAllowed {
		n := s.Topics()
		if s.HasTransactionalID {
			n++
		}
		c.e.metrics.allow.Add(float64(n))
		c.e.metrics.countRule(DecisionAllow, OpWrite.String(), unrecordedRule, float64(n))
		return
	}
	if s.HasTransactionalID {
		c.record(OpWrite, ResTransactionalID, s.TransactionalID, c.decide(OpWrite, ResTransactionalID, s.TransactionalID))
	}
	for i := 0; i < s.Topics(); i++ {
		name, id, _ := s.Topic(i)
		name, _ = c.topicName(name, id)
		c.record(OpWrite, ResTopic, name, c.decide(OpWrite, ResTopic, name))
	}
}
