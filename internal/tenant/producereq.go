package tenant

import (
	"context"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// rawProduceRequest maps a Produce request body without decoding its
// records: the transactional id and topic names (v0-12) get their prefixes,
// topic ids (v13+) are checked and another tenant's disguised; the record
// batches are copied as they are. mapResponse: an id was disguised.
func rawProduceRequest(ctx context.Context, m *Mapper, version int16, body, dst []byte) ([]byte, bool, error) {
	w := rawRewriter{in: body, out: dst, flexible: protocol.IsFlexible(wire.ProduceKey, version)}
	if version >= 3 {
		w.mapString(true, func(id string) (string, error) { return m.UpTxnID(id), nil })
	}
	w.skip(2 + 4) // acks, timeout_ms
	c := mapCtx{ctx: ctx, m: m}
	for topics := w.arrayLen(); topics > 0 && w.err == nil; topics-- {
		if version >= 13 {
			w.mapUUID(c.upID)
		} else {
			w.mapString(false, func(name string) (string, error) { return m.UpTopic(name), nil })
		}
		for partitions := w.arrayLen(); partitions > 0 && w.err == nil; partitions-- {
			w.skip(4) // partition index
			w.skipBytes()
			w.tags()
		}
		w.tags()
	}
	w.tags()
	out, err := w.finish("produce request")
	return out, c.disguised, err
}

// produceStreams reports, from the first bytes of a Produce request body
// (prefix: as much as the engine has buffered), that the request needs no
// mapping at all, so the engine may stream it instead of reading it whole:
// v13+ (topics by id), no transactional id to prefix, and one topic whose
// id is the tenant's. The usual idempotent producer writing to one topic
// thus costs what passthrough costs. false: not known from prefix; map it.
func produceStreams(ctx context.Context, m *Mapper, version int16, prefix []byte) bool {
	if version < 13 {
		return false
	}
	w := rawRewriter{in: prefix, flexible: true}
	if n := w.length(false, false); n != -1 && (m.names.TransactionalID != "" || n < 0) {
		return false // a transactional id to prefix (or not known)
	} else if n > 0 {
		w.skip(n)
	}
	w.skip(2 + 4) // acks, timeout_ms
	topics := w.uvarint()
	if w.err != nil || topics != 2 { // compact array: one topic
		return false
	}
	if !w.need(16) {
		return false
	}
	id := [16]byte(prefix[w.pos : w.pos+16])
	return m.UpTopicID(ctx, id) == id
}
