package refusal

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// Rewrite keeps the topics a filter has no function for as they are,
// refuses a topic id no metadata response named with UNKNOWN_TOPIC_ID,
// replaces the records a function changed and refuses the partitions it
// refuses; the upstream's answer then carries every refusal.
func TestRewriteKeepsChangesAndRefuses(t *testing.T) {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks = 13, -1
	topic := func(name string, id byte, partitions ...int32) kmsg.ProduceRequestTopic {
		t := kmsg.NewProduceRequestTopic()
		t.Topic, t.TopicID = name, [16]byte{id}
		for _, p := range partitions {
			tp := kmsg.NewProduceRequestTopicPartition()
			tp.Partition, tp.Records = p, []byte("records")
			t.Partitions = append(t.Partitions, tp)
		}
		return t
	}
	req.Topics = []kmsg.ProduceRequestTopic{topic("", 1, 0), topic("", 2, 0, 1), topic("", 3, 0)}
	var names filter.TopicNames
	meta := kmsg.NewPtrMetadataResponse()
	for id, name := range map[byte]string{2: "rewritten", 3: "untouched"} {
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic, mt.TopicID = kmsg.StringPtr(name), [16]byte{id}
		meta.Topics = append(meta.Topics, mt)
	}
	if err := names.Learn(meta); err != nil {
		t.Fatal(err)
	}
	var unnamed [][16]byte
	var r Produce
	modified := r.Rewrite(req, &names, func(id [16]byte) { unnamed = append(unnamed, id) }, func(_ *kmsg.ProduceRequestTopic, name string) PartitionFunc {
		if name != "rewritten" {
			return nil
		}
		return func(p *kmsg.ProduceRequestTopicPartition) ([]byte, bool, *kerr.Error, string) {
			if p.Partition == 1 {
				return nil, false, kerr.RequestTimedOut, "store down"
			}
			return []byte("new"), true, nil, ""
		}
	})
	if !modified || len(unnamed) != 1 || unnamed[0] != ([16]byte{1}) {
		t.Fatalf("modified %v, unnamed ids %v: want modified, id 1 unnamed", modified, unnamed)
	}
	if len(req.Topics) != 2 || len(req.Topics[0].Partitions) != 1 || string(req.Topics[0].Partitions[0].Records) != "new" ||
		string(req.Topics[1].Partitions[0].Records) != "records" {
		t.Fatalf("forwarded %+v: want topic 2's partition 0 rewritten and topic 3 as it was", req.Topics)
	}
	v := r.Verdict(req, modified, "rewritten", nil)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if err := v.OnResponse(resp); err != nil {
		t.Fatal(err)
	}
	codes := map[[2]int32]int16{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			codes[[2]int32{int32(rt.TopicID[0]), rp.Partition}] = rp.ErrorCode
		}
	}
	want := map[[2]int32]int16{{1, 0}: kerr.UnknownTopicID.Code, {2, 0}: 0, {2, 1}: kerr.RequestTimedOut.Code, {3, 0}: 0}
	for k, code := range want {
		if got, ok := codes[k]; !ok || got != code {
			t.Errorf("topic %d partition %d: error code %d (answered: %v), want %d", k[0], k[1], got, ok, code)
		}
	}
}
