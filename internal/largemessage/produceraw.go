package largemessage

import (
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
)

// produceRaw decides, from the raw request, a produce with nothing to
// offload (no topic a rule matches, or every batch of those that do
// passing cannotOffload): forwarded as it came, without decoding it.
// Anything else (a topic id no metadata response has named yet, a body
// the summary refuses) goes to produce.
func (f *Filter) produceRaw(_ *filter.Conn, version int16, body []byte) (filter.Verdict, bool) {
	rs := f.rules.Load()
	if len(rs.list) == 0 {
		return filter.Verdict{}, true
	}
	w := f.worker()
	defer f.done(w)
	s := &w.summary
	defer s.Reset()
	if s.Parse(version, body) != nil {
		return filter.Verdict{}, false
	}
	for i := range s.Topics() {
		name, id, partitions := s.Topic(i)
		if name == "" {
			var ok bool
			if name, ok = f.names.Lookup(id); !ok {
				return filter.Verdict{}, false
			}
		}
		r, match := rs.find(name)
		if !match {
			continue
		}
		for j := range partitions {
			if _, records := s.Partition(i, j); len(records) > 0 && !cannotOffload(records, r) {
				return filter.Verdict{}, false
			}
		}
	}
	return filter.Verdict{}, true
}

// produceSummary is a worker's reusable summary of a raw produce.
type produceSummary = wire.ProduceSummary
