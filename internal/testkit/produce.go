package testkit

import "github.com/twmb/franz-go/pkg/kmsg"

// ProduceByName is a Produce at version (by topic name: below v13) with
// acks, waiting at most 10 s, of records (a RecordBatch) to partition 0
// of each topic. Callers change what their test is about (partition,
// timeout, each topic's records) on the result.
func ProduceByName(version, acks int16, records []byte, topics ...string) *kmsg.ProduceRequest {
	return newProduce(version, acks, records, topics, func(rt *kmsg.ProduceRequestTopic, topic string) { rt.Topic = topic })
}

// ProduceByID is ProduceByName for version 13 or later, where topics are
// named by id.
func ProduceByID(version, acks int16, records []byte, ids ...[16]byte) *kmsg.ProduceRequest {
	return newProduce(version, acks, records, ids, func(rt *kmsg.ProduceRequestTopic, id [16]byte) { rt.TopicID = id })
}

// newProduce is the Produce ProduceByName describes with a topic for each
// key, which name writes into it (by name or by id).
func newProduce[K any](version, acks int16, records []byte, keys []K, name func(*kmsg.ProduceRequestTopic, K)) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(version)
	req.Acks, req.TimeoutMillis = acks, 10000
	for _, k := range keys {
		rt := kmsg.NewProduceRequestTopic()
		name(&rt, k)
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = records
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	return req
}
