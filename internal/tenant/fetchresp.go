package tenant

import (
	"fmt"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// rawFetchResponse maps a Fetch response body of v0-12 (topics by name)
// without decoding its records: each topic name loses the prefix. A topic
// that is not the tenant's cannot be in an answer to the tenant's request;
// if the upstream sends one anyway the response is refused.
func rawFetchResponse(m *Mapper, version int16, body, dst []byte) ([]byte, error) {
	w := rawRewriter{in: body, out: dst, flexible: protocol.IsFlexible(wire.FetchKey, version)}
	if version >= 1 {
		w.skip(4) // throttle_time_ms
	}
	if version >= 7 {
		w.skip(2 + 4) // error_code, session_id
	}
	for topics := w.arrayLen(); topics > 0 && w.err == nil; topics-- {
		w.mapString(false, func(name string) (string, error) {
			down, ok := m.DownTopic(name)
			if !ok {
				return "", fmt.Errorf("upstream answered for topic %q, not the virtual cluster's", name)
			}
			return down, nil
		})
		for partitions := w.arrayLen(); partitions > 0 && w.err == nil; partitions-- {
			w.skip(4 + 2 + 8) // index, error_code, high_watermark
			if version >= 4 {
				w.skip(8) // last_stable_offset
			}
			if version >= 5 {
				w.skip(8) // log_start_offset
			}
			if version >= 4 {
				for aborted := w.arrayLen(); aborted > 0 && w.err == nil; aborted-- {
					w.skip(8 + 8) // producer_id, first_offset
					w.tags()
				}
			}
			if version >= 11 {
				w.skip(4) // preferred_read_replica
			}
			w.skipBytes()
			w.tags()
		}
		w.tags()
	}
	w.tags()
	return w.finish("fetch response")
}
