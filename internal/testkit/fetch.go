package testkit

import "github.com/twmb/franz-go/pkg/kmsg"

// FetchByName is a sessionless consumer Fetch at version (by topic name:
// below v13) of partition 0 of each topic from offset 0, waiting at most
// 10 ms, up to 1 MiB per partition and per response. Callers change what
// their test is about (session, wait, min bytes) on the result.
func FetchByName(version int16, topics ...string) *kmsg.FetchRequest {
	return newFetch(version, topics, func(rt *kmsg.FetchRequestTopic, topic string) { rt.Topic = topic })
}

// FetchByID is FetchByName for version 13 or later, where topics are
// named by id.
func FetchByID(version int16, ids ...[16]byte) *kmsg.FetchRequest {
	return newFetch(version, ids, func(rt *kmsg.FetchRequestTopic, id [16]byte) { rt.TopicID = id })
}

// newFetch is the Fetch FetchByName describes with a topic for each key,
// which name writes into it (by name or by id).
func newFetch[K any](version int16, keys []K, name func(*kmsg.FetchRequestTopic, K)) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest() // replica id -1, session epoch -1
	req.SetVersion(version)
	req.MaxWaitMillis, req.MaxBytes = 10, 1<<20
	for _, k := range keys {
		rt := kmsg.NewFetchRequestTopic()
		name(&rt, k)
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	return req
}
