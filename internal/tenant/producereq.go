package tenant

import (
	"context"

	"github.com/kproxy/kproxy/internal/protocol"
)

// rawProduceRequest maps a Produce request body without decoding its
// records: the transactional id and topic names (v0-12) get their prefixes,
// topic ids (v13+) are checked and another tenant's disguised; the record
// batches are copied as they are. mapResponse: an id was disguised.
func rawProduceRequest(ctx context.Context, m *Mapper, version int16, body, dst []byte) ([]byte, bool, error) {
	w := rawRewriter{in: body, out: dst, flexible: protocol.IsFlexible(protocol.ProduceKey, version)}
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
