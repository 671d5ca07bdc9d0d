// Package refusal lets a filter answer, itself, the parts of a Produce
// request it cannot forward (records it could not encrypt, values it could
// not offload), forward the rest, and merge its answers into the
// upstream's response: one partition's failure never fails the others.
package refusal

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// Produce holds the produce partitions a filter answers itself, removed
// from the request. The zero value refuses nothing.
type Produce struct {
	topics []kmsg.ProduceResponseTopic
}

// Topic refuses every partition of t.
func (r *Produce) Topic(t kmsg.ProduceRequestTopic, code *kerr.Error, msg string) {
	for _, p := range t.Partitions {
		r.Partition(t, p.Partition, code, msg)
	}
}

// Partition refuses partition of t with code.
func (r *Produce) Partition(t kmsg.ProduceRequestTopic, partition int32, code *kerr.Error, msg string) {
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

// Verdict forwards what is left of req, answering the refused partitions
// with the upstream's answer; all refused, the filter answers alone. what
// says, for the log line of an acks=0 request (which no response could
// tell), what could not be done to the partitions ("encrypted"). then,
// when not nil, sees the upstream's response before the refusals are
// merged into it.
func (r *Produce) Verdict(req *kmsg.ProduceRequest, modified bool, what string, then func(*kmsg.ProduceResponse)) filter.Verdict {
	switch {
	case len(r.topics) == 0 && then == nil:
		return filter.Verdict{Modified: modified}
	case len(r.topics) == 0:
	case req.Acks == 0:
		// No response would carry the errors: close, as a broker does.
		return filter.Verdict{Close: fmt.Errorf("acks=0 produce with partitions that could not be %s", what)}
	case len(req.Topics) == 0:
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		resp.Version = req.Version
		resp.Topics = r.topics
		return filter.Verdict{Respond: resp}
	default:
		modified = true
	}
	return filter.Verdict{Modified: modified, OnResponse: filter.Then(func(resp *kmsg.ProduceResponse) error {
		if then != nil {
			then(resp)
		}
		r.merge(resp)
		return nil
	})}
}

// merge adds the refused partitions to the upstream's answer.
func (r *Produce) merge(resp *kmsg.ProduceResponse) {
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
