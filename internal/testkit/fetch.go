package testkit

import "github.com/twmb/franz-go/pkg/kmsg"

// FetchByName is a sessionless consumer Fetch at version (by topic name:
// below v13) of partition 0 of each topic from offset 0, waiting at most
// 10 ms, up to 1 MiB per partition and per response. Callers change what
// their test is about (session, wait, min bytes) on the result.
func FetchByName(version int16, topics ...string) *kmsg.FetchRequest {
	req := newFetch(version)
	for _, topic := range topics {
		rt := fetchTopic()
		rt.Topic = topic
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// FetchByID is FetchByName for version 13 or later, where topics are
// named by id.
func FetchByID(version int16, ids ...[16]byte) *kmsg.FetchRequest {
	req := newFetch(version)
	for _, id := range ids {
		rt := fetchTopic()
		rt.TopicID = id
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func newFetch(version int16) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest() // replica id -1, session epoch -1
	req.SetVersion(version)
	req.MaxWaitMillis, req.MaxBytes = 10, 1<<20
	return req
}

func fetchTopic() kmsg.FetchRequestTopic {
	rt := kmsg.NewFetchRequestTopic()
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	return rt
}
