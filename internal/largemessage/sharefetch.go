package largemessage

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// shareFetchRequest resolves the pointers of the response to a ShareFetch
// request (KIP-932) as fetchRequest does, within its max bytes.
func (f *Filter) shareFetchRequest(c *filter.Conn, req *kmsg.ShareFetchRequest) filter.Verdict {
	if !f.resolve.Load() {
		return filter.Verdict{}
	}
	total, mem := int64(req.MaxBytes), c.Memory
	return filter.Verdict{InspectResponse: shareFetchMayResolve, OnResponse: filter.Then(func(resp *kmsg.ShareFetchResponse) error {
		f.shareFetch(resp, total, mem)
		return nil
	})}
}

// shareFetch resolves a ShareFetch response's pointers; its records are
// never of aborted transactions (share groups read committed records).
func (f *Filter) shareFetch(resp *kmsg.ShareFetchResponse, total int64, mem filter.Memory) {
	rs := f.rules.Load()
	w := f.worker()
	defer f.done(w)
	w.resolve.mem, w.resolve.charged = mem, 0
	defer w.resolve.release()
	ctx := context.Background()
	room := total
	for i := range resp.Topics {
		t := &resp.Topics[i]
		name, _ := f.names.Lookup(t.TopicID)
		_, match := rs.find(name)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if match && len(p.Records) > 0 && p.ErrorCode == 0 {
				p.Records = f.resolvePartition(ctx, w, name, p.Partition, p.Records, nil, &p.ErrorCode, room, room == total)
			}
			room -= int64(len(p.Records))
		}
	}
}
