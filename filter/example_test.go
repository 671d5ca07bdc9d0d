package filter_test

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// readOnly refuses every Produce request and hides one topic from
// Metadata answers.
type readOnly struct{ hidden string }

func (f readOnly) Register(r *filter.Registry) {
	filter.OnRequest(r, f.refuseProduce)
	filter.OnResponse(r, f.hideTopic)
}

func (readOnly) refuseProduce(_ *filter.Conn, req *kmsg.ProduceRequest) filter.Verdict {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, 29 // TOPIC_AUTHORIZATION_FAILED
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return filter.Verdict{Respond: resp}
}

func (f readOnly) hideTopic(resp *kmsg.MetadataResponse) error {
	kept := resp.Topics[:0]
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != f.hidden {
			kept = append(kept, t)
		}
	}
	resp.Topics = kept
	return nil
}

// A filter registers typed handlers; the engine dispatches by their keys.
func Example() {
	var reg filter.Registry
	readOnly{hidden: "payroll"}.Register(&reg)
	for _, h := range reg.Requests() {
		fmt.Println("request", kmsg.NameForKey(h.Key))
	}
	for _, h := range reg.Responses() {
		fmt.Println("response", kmsg.NameForKey(h.Key))
	}
	// Output:
	// request Produce
	// response Metadata
}
