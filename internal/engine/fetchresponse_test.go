package engine

import "github.com/twmb/franz-go/pkg/kmsg"

// fetchResponse is a Fetch response of version with the broker's
// throttle_time_ms and one topic of one partition carrying records.
func fetchResponse(version int16, throttle int32, records []byte) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(version)
	resp.ThrottleMillis = throttle
	partition := kmsg.NewFetchResponseTopicPartition()
	partition.RecordBatches = records
	topic := kmsg.NewFetchResponseTopic()
	topic.Topic = "t"
	topic.Partitions = []kmsg.FetchResponseTopicPartition{partition}
	resp.Topics = []kmsg.FetchResponseTopic{topic}
	return resp
}
