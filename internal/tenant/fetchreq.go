package tenant

import (
	"context"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// rawFetchRequest maps a Fetch request body without decoding it: topic
// names (v0-12) get the prefix; topic ids (v13+) are checked and another
// tenant's disguised in place, so the usual request (the tenant's own ids)
// is forwarded as it came, with no copy. mapResponse: an id was disguised.
func rawFetchRequest(ctx context.Context, m *Mapper, version int16, body, dst []byte) ([]byte, bool, error) {
	w := rawRewriter{in: body, out: dst, flexible: protocol.IsFlexible(wire.FetchKey, version)}
	c := mapCtx{ctx: ctx, m: m}
	topic := func() {
		if version >= 13 {
			w.mapUUID(c.upID)
		} else {
			w.mapString(false, func(name string) (string, error) { return m.UpTopic(name), nil })
		}
	}
	if version <= 14 {
		w.skip(4) // replica_id
	}
	w.skip(4 + 4) // max_wait_ms, min_bytes
	if version >= 3 {
		w.skip(4) // max_bytes
	}
	if version >= 4 {
		w.skip(1) // isolation_level
	}
	if version >= 7 {
		w.skip(4 + 4) // session_id, session_epoch
	}
	for topics := w.arrayLen(); topics > 0 && w.err == nil; topics-- {
		topic()
		for partitions := w.arrayLen(); partitions > 0 && w.err == nil; partitions-- {
			w.skip(4) // partition
			if version >= 9 {
				w.skip(4) // current_leader_epoch
			}
			w.skip(8) // fetch_offset
			if version >= 12 {
				w.skip(4) // last_fetched_epoch
			}
			if version >= 5 {
				w.skip(8) // log_start_offset
			}
			w.skip(4) // partition_max_bytes
			w.tags()
		}
		w.tags()
	}
	if version >= 7 {
		for forgotten := w.arrayLen(); forgotten > 0 && w.err == nil; forgotten-- {
			topic()
			w.skip(4 * w.arrayLen()) // partitions
			w.tags()
		}
	}
	if version >= 11 {
		w.skip(w.length(false, false)) // rack_id
	}
	w.tags()
	out, err := w.finish("fetch request")
	return out, c.disguised, err
}
