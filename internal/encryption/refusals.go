package encryption

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// refusals are the produce partitions the filter answers itself, removed
// from the request.
type refusals struct {
	topics []kmsg.ProduceResponseTopic
}

// topic refuses every partition of t.
func (r *refusals) topic(t kmsg.ProduceRequestTopic, code *kerr.Error, msg string) {
	for _, p := range t.Partitions {
		r.partition(t, p.Partition, code, msg)
	}
}

// partition refuses partition of t with code.
func (r *refusals) partition(t kmsg.ProduceRequestTopic, partition int32, code *kerr.Error, msg string) {
	if n := len(r.topics); n == 0 || r.topics[n-1].Topic != t.Topic || r.topics[n-1].TopicID != t.TopicID {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		r.topics = append(r.topics, rt)
	}
	p := kmsg.NewProduceResponseTopicPartition()
	p.Partition, p.ErrorCode, p.BaseOffset = partition, code.Code, -1
	p.ErrorMessage = kmsg.StringPtr(msg)
	last := &r.topics[len(r.topics)-1]
	last.Partitions = append(last.Partitions, p)
}

// verdict forwards what is left of req, answering the refused partitions
// with the upstream's answer; all refused, the filter answers alone.
func (r *refusals) verdict(req *kmsg.ProduceRequest, modified bool) filter.Verdict {
	switch {
	case len(r.topics) == 0:
		return filter.Verdict{Modified: modified}
	case req.Acks == 0:
		// No response would carry the errors: close, as a broker does.
		return filter.Verdict{Close: fmt.Errorf("acks=0 produce with partitions that could not be encrypted")}
	case len(req.Topics) == 0:
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		resp.Version = req.Version
		resp.Topics = r.topics
		return filter.Verdict{Respond: resp}
	}
	return filter.Verdict{Modified: true, OnResponse: filter.Then(func(resp *kmsg.ProduceResponse) error {
		r.merge(resp)
		return nil
	})}
}

// merge adds the refused partitions to the upstream's answer.
func (r *refusals) merge(resp *kmsg.ProduceResponse) {
	for _, rt := range r.topics {
		merged := false
		for i := range resp.Topics {
			t := &resp.Topics[i]
			if t.Topic == rt.Topic && t.TopicID == rt.TopicID {
				t.Partitions = append(t.Partitions, rt.Partitions...)
				merged = true
				break
			}
		}
		if !merged {
			resp.Topics = append(resp.Topics, rt)
		}
	}
}
