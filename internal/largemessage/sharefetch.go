package largemessage

import (
	"context"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// shareFetchRequest resolves the pointers of the response to a ShareFetch
// request (KIP-932) as fetchRequest does, streaming the large values.
func (f *Filter) shareFetchRequest(c *filter.Conn, _ *kmsg.ShareFetchRequest) filter.Verdict {
	if !f.resolve.Load() {
		return filter.Verdict{}
	}
	mem := c.Memory
	return filter.Verdict{InspectResponse: shareFetchMayResolve, OnShareFetchSpliced: func(resp *kmsg.ShareFetchResponse, s *filter.Splicer) error {
		f.shareFetch(resp, mem, s)
		return nil
	}}
}

// shareFetch resolves a ShareFetch response's pointers, as fetch does,
// but every one of them, whatever the request's max bytes: the broker
// has handed the member each record of the response (its acquired
// records), and one left out would come back only when its acquisition
// lock expired, counted as a delivery, and be archived after
// group.share.delivery.count.limit of them. Its records are never of
// aborted transactions (share groups read committed records).
func (f *Filter) shareFetch(resp *kmsg.ShareFetchResponse, mem filter.Memory, s *filter.Splicer) {
	rs := f.rules.Load()
	w := f.worker()
	defer f.done(w)
	w.resolve.mem, w.resolve.charged = mem, 0
	defer w.resolve.release()
	w.resolve.splicer = s
	defer func() { w.resolve.splicer = nil }()
	ctx := context.Background()
	for i := range resp.Topics {
		t := &resp.Topics[i]
		name, _ := f.names.Lookup(t.TopicID)
		_, match := rs.find(name)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if match && len(p.Records) > 0 && p.ErrorCode == 0 {
				p.Records = f.resolvePartition(ctx, w, name, p.Partition, p.Records, nil, &p.ErrorCode, math.MaxInt64, true)
			}
		}
	}
}
