package main

import (
	"fmt"
	"path"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// RequireHeader is a kproxy filter that refuses produced records lacking
// the header named Header, as a broker refuses records that fail its
// validation: the partition's answer is INVALID_RECORD (87) with a
// message naming each record. Partitions whose records all carry the
// header are forwarded and stored as usual.
type RequireHeader struct {
	Header string
	// Topics are the topics (path.Match globs) whose records must carry
	// the header; empty: every topic.
	Topics []string
	// names names the topics of requests that carry only topic ids
	// (Produce v13 and later); nil, or an id it has not seen: the records
	// are checked, so that a topic is never let through unnamed.
	names *filter.TopicNames
}

// applies reports whether f checks the records of t.
func (f RequireHeader) applies(t kmsg.ProduceRequestTopic) bool {
	if len(f.Topics) == 0 {
		return true
	}
	topic := t.Topic
	if topic == "" {
		name, ok := f.names.Lookup(t.TopicID)
		if !ok {
			return true
		}
		topic = name
	}
	for _, pattern := range f.Topics {
		if ok, _ := path.Match(pattern, topic); ok { // validated at load
			return true
		}
	}
	return false
}

// Register makes f see every Produce request.
func (f RequireHeader) Register(r *filter.Registry) {
	filter.OnRequest(r, f.produce)
}

func (f RequireHeader) produce(_ *filter.Conn, req *kmsg.ProduceRequest) filter.Verdict {
	refused := removeRefusedIn(req, f.Header, f.applies)
	switch {
	case len(refused) == 0:
		return filter.Verdict{}
	case req.Acks == 0:
		// No response will carry the error: a broker closes the
		// connection, so that the client notices.
		return filter.Verdict{Close: fmt.Errorf("acks=0 produce with records lacking header %q", f.Header)}
	case len(req.Topics) == 0:
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		resp.Topics = refused
		return filter.Verdict{Respond: resp}
	}
	return filter.Verdict{Modified: true, OnResponse: filter.Then(func(resp *kmsg.ProduceResponse) error {
		addRefused(resp, refused)
		return nil
	})}
}

// removeRefused removes from req each partition with a record that lacks
// header (and each topic left with no partition), and returns the
// answers a broker would give for them.
func removeRefused(req *kmsg.ProduceRequest, header string) []kmsg.ProduceResponseTopic {
	return removeRefusedIn(req, header, func(kmsg.ProduceRequestTopic) bool { return true })
}

// removeRefusedIn is removeRefused for the topics applies to; the others'
// partitions are kept as they are.
func removeRefusedIn(req *kmsg.ProduceRequest, header string, applies func(kmsg.ProduceRequestTopic) bool) []kmsg.ProduceResponseTopic {
	var refused []kmsg.ProduceResponseTopic
	keptTopics := req.Topics[:0]
	for _, t := range req.Topics {
		if !applies(t) {
			keptTopics = append(keptTopics, t)
			continue
		}
		answer := kmsg.ProduceResponseTopic{Topic: t.Topic, TopicID: t.TopicID}
		kept := t.Partitions[:0]
		for _, p := range t.Partitions {
			if rp, ok := checkPartition(p, header); ok {
				kept = append(kept, p)
			} else {
				answer.Partitions = append(answer.Partitions, rp)
			}
		}
		if len(answer.Partitions) > 0 {
			refused = append(refused, answer)
		}
		if t.Partitions = kept; len(kept) > 0 {
			keptTopics = append(keptTopics, t)
		}
	}
	req.Topics = keptTopics
	return refused
}

// checkPartition reports whether every record of p carries header, and
// otherwise what a broker answers for p.
func checkPartition(p kmsg.ProduceRequestTopicPartition, header string) (kmsg.ProduceResponseTopicPartition, bool) {
	answer := kmsg.NewProduceResponseTopicPartition()
	answer.Partition, answer.BaseOffset = p.Partition, -1
	// The same decoding a consumer does: every batch, decompressed,
	// checksums verified.
	part, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{KeepControlRecords: true, Partition: p.Partition},
		&kmsg.FetchResponseTopicPartition{Partition: p.Partition, RecordBatches: p.Records}, kgo.DefaultDecompressor(), nil)
	if part.Err != nil {
		answer.ErrorCode = kerr.CorruptMessage.Code
		answer.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("records unreadable: %v", part.Err))
		return answer, false
	}
	for i, rec := range part.Records {
		if !hasHeader(rec, header) {
			answer.ErrorRecords = append(answer.ErrorRecords, kmsg.ProduceResponseTopicPartitionErrorRecord{
				RelativeOffset: int32(i),
				ErrorMessage:   kmsg.StringPtr(fmt.Sprintf("record lacks header %q", header)),
			})
		}
	}
	if len(answer.ErrorRecords) == 0 {
		return answer, true
	}
	answer.ErrorCode = kerr.InvalidRecord.Code
	answer.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("%d of %d records lack header %q; the batch was not written", len(answer.ErrorRecords), len(part.Records), header))
	return answer, false
}

func hasHeader(rec *kgo.Record, header string) bool {
	for _, h := range rec.Headers {
		if h.Key == header {
			return true
		}
	}
	return false
}

// addRefused merges the refused partitions' answers into the upstream's
// response to the rest of the request.
func addRefused(resp *kmsg.ProduceResponse, refused []kmsg.ProduceResponseTopic) {
	for _, r := range refused {
		merged := false
		for i := range resp.Topics {
			if t := &resp.Topics[i]; t.Topic == r.Topic && t.TopicID == r.TopicID {
				t.Partitions = append(t.Partitions, r.Partitions...)
				merged = true
				break
			}
		}
		if !merged {
			resp.Topics = append(resp.Topics, r)
		}
	}
}
